"""The exec gate and a cd the shell refuses, `cd -P -L`, and sort spilling to /tmp."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from .exec_support import SECRET, assert_blocked, verdict


@pytest.fixture
def world(tmp_path: Path) -> Path:
    """tmp/ws (the workspace, with a.txt and a link x -> ws/a/b), tmp/secret.txt beside it."""
    ws = tmp_path / "ws"
    (ws / "a" / "b").mkdir(parents=True)
    (ws / "a.txt").write_text("b\na\n")
    (ws / "x").symlink_to(ws / "a" / "b")
    (tmp_path / "secret.txt").write_text(SECRET + "\n")
    (tmp_path / "home").mkdir()
    return tmp_path


@pytest.mark.parametrize(
    "command",
    [
        "cd ..; cd ws/nope/..; head secret.txt",  # bash refuses cd nope/.. and stays outside
        "bash -c 'cd ..; cd ws/nope/..; head secret.txt'",
        "cd ..; cd ws/a.txt/..; head secret.txt",  # a file before ..
        "cd -P -L x/../..; head secret.txt",  # the last of -P/-L wins: logical, so ws/x/../.. is outside
        "cd -L -P x/../..; cd -L ../..; head secret.txt",
    ],
)
def test_a_cd_the_shell_may_refuse_or_read_differently_asks(command: str, world: Path) -> None:
    assert_blocked(command, world)


def test_after_a_cd_safe_bins_read_what_the_sandbox_lets_them(world: Path) -> None:
    """cd is not followed any more: inside a sandbox the read is the sandbox's business,
    without one it asks (the gate cannot tell where ../a.txt is)."""
    for command in ("cd a/b/..; head ../a.txt", "cd -L -P x/..; head ../a.txt"):
        assert verdict(command, world, confined=True).action == "run"
        assert verdict(command, world).action == "ask"


@pytest.mark.parametrize(
    "command",
    [
        "sort -S 1K ./a.txt",
        "sort --buffer-size=1K ./a.txt",
        "sort --parallel=64 ./a.txt",
        "sort /dev/urandom",
        "sort /dev/zero",
        "sort < /dev/urandom",
    ],
)
def test_sort_cannot_be_made_to_fill_the_disk_with_temporary_files(command: str, world: Path) -> None:
    # never run: on the old gate these spilled gigabytes into /tmp
    found = verdict(command, world)
    assert found.action == "ask", found


def test_ordinary_sort_still_runs(world: Path) -> None:
    assert verdict("sort -u ./a.txt", world, confined=True).action == "run"
    assert verdict("head -c 16 /dev/urandom | od -An -tx1", world).action in ("run", "ask")
    assert os.path.exists(world / "ws" / "a.txt")
