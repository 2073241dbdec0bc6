"""The memo of resolved allowlist entries can only make the gate ask, never run more."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from clawbot_tools.runtime import executables
from clawbot_tools.runtime.config import ExecSettings
from clawbot_tools.runtime.exec_policy import PolicyInput, decide


def _program(path: Path) -> None:
    path.write_text("#!/bin/sh\necho hi\n")
    path.chmod(0o755)


@pytest.fixture
def world(tmp_path: Path) -> tuple[Path, PolicyInput]:
    ws, bin_dir = tmp_path / "ws", tmp_path / "bin"
    ws.mkdir()
    bin_dir.mkdir()
    given = PolicyInput(ExecSettings(allowlist=["tool"]), cwd=str(ws), workspace=str(ws), path_value=f"{bin_dir}{os.pathsep}/usr/bin:/bin", home=None)
    return bin_dir, given


def test_a_program_replaced_by_another_binary_asks_even_while_the_old_entry_is_remembered(world) -> None:
    bin_dir, given = world
    first, second = bin_dir / "tool-1.0", bin_dir / "tool-2.0"
    _program(first)
    _program(second)
    (bin_dir / "tool").symlink_to(first)
    assert decide("tool", given).action == "run"
    (bin_dir / "tool").unlink()
    (bin_dir / "tool").symlink_to(second)  # within the memo's lifetime: the entry still names tool-1.0
    assert decide("tool", given).action == "ask"


def test_the_memo_expires_so_a_newly_installed_program_is_found(world, monkeypatch: pytest.MonkeyPatch) -> None:
    bin_dir, given = world
    assert decide("tool", given).action == "ask"  # not installed yet
    _program(bin_dir / "tool")
    monkeypatch.setattr(executables, "COMPILED_TTL_S", 0.0)
    assert decide("tool", given).action == "run"
