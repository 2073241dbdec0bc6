"""Workspace files reach the system prompt only if they really are inside the workspace.

Real files, links and folders under tmp_path, the real workspace plugin, real turns whose
system prompt the model receives (the bootstrap-extra-files plugin's files are tested in its
own tests). A refused file shows as a one-line note saying why, never its content, and
``clawbot context`` shows the same.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import clawbot_workspace.plugin
import pytest
from clawbot.agent.conversation import Conversation
from clawbot.agent.models import ModelChoice
from clawbot.agent.prompt_report import prompt_report, report_text

from ..cli.clihelpers import run_cli
from .scripted import ScriptedProvider

SECRET = '{"api_key": "sk-ant-SECRET-4711"}'
OUTSIDE = "it leads outside the workspace"


@pytest.fixture
def world(clawbot_home: Path, tmp_path: Path) -> dict[str, Path]:
    credentials = clawbot_home / "credentials"
    credentials.mkdir(mode=0o700, parents=True, exist_ok=True)
    (credentials / "anthropic.json").write_text(SECRET)  # as `clawbot onboard` stores a key
    (credentials / "anthropic.json").chmod(0o600)
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "SOUL.md").write_text("Calm.\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "notes.md").write_text(SECRET)
    return {"ws": ws, "secret": credentials / "anthropic.json", "outside": outside}


def _absolute(w: dict[str, Path]) -> None:
    (w["ws"] / "AGENTS.md").symlink_to(w["secret"])


def _relative(w: dict[str, Path]) -> None:
    (w["ws"] / "AGENTS.md").symlink_to(Path("..") / "outside" / "notes.md")


def _chain(w: dict[str, Path]) -> None:
    (w["ws"] / "second").symlink_to(w["secret"])
    (w["ws"] / "first").symlink_to("second")
    (w["ws"] / "AGENTS.md").symlink_to("first")


def _folder_on_the_way(w: dict[str, Path]) -> None:
    (w["ws"] / "rules").symlink_to(w["outside"], target_is_directory=True)
    (w["ws"] / "AGENTS.md").symlink_to(Path("rules") / "notes.md")


def _hard_link(w: dict[str, Path]) -> None:
    os.link(w["secret"], w["ws"] / "AGENTS.md")


LINKS: dict[str, Callable[[dict[str, Path]], None]] = {
    "absolute symlink to a credential": _absolute,
    "relative ../ symlink": _relative,
    "chain of symlinks": _chain,
    "symlinked folder on the way": _folder_on_the_way,
    "hard link to a credential": _hard_link,
}


async def _turn(make_kernel, ws: Path):
    kernel = await make_kernel(plugins={"workspace": clawbot_workspace.plugin}, config=f'[agents.defaults]\nworkspace = "{ws}"\n')
    provider = ScriptedProvider("ok")
    conversation = Conversation(kernel, ModelChoice(provider, "m"), "main", services=None)
    await conversation.send("agent:main:main", "hi")
    built = await conversation.build_prompt("agent:main:main", None)
    return provider.requests[0].system.text, prompt_report(built)


@pytest.fixture(params=["proc", "no-proc"])
def platform(request, monkeypatch: pytest.MonkeyPatch) -> str:
    """With /proc the opened file's own path is checked; without it, its device and inode."""
    if request.param == "no-proc":
        real_readlink = os.readlink

        def readlink(path, *args, **kwargs):  # noqa: ANN001, ANN202
            if str(path).startswith("/proc/self/fd/"):
                raise FileNotFoundError(path)
            return real_readlink(path, *args, **kwargs)

        monkeypatch.setattr(os, "readlink", readlink)
    return request.param


@pytest.mark.parametrize("plant", LINKS.values(), ids=LINKS.keys())
async def test_a_bootstrap_file_leading_outside_the_workspace_is_not_loaded(make_kernel, world, platform, plant) -> None:
    plant(world)
    system, report = await _turn(make_kernel, world["ws"])
    assert "SECRET-4711" not in system
    assert "[AGENTS.md was not loaded: " in system and "Calm." in system
    (agents,) = [f for f in report["files"] if f["name"] == "AGENTS.md"]
    assert agents["not_loaded"] and agents["raw_chars"] == 0
    assert f"AGENTS.md not loaded ({agents['not_loaded']})" in report_text(report)
    expected = "hard links" if plant is _hard_link else OUTSIDE
    assert agents["not_loaded"].startswith(expected) or expected in agents["not_loaded"]


async def test_links_that_stay_inside_the_workspace_load_and_so_does_a_linked_workspace(make_kernel, world, tmp_path: Path, platform) -> None:
    (world["ws"] / "docs").mkdir()
    (world["ws"] / "docs" / "agents.md").write_text("Work carefully.\n")
    (world["ws"] / "AGENTS.md").symlink_to(Path("docs") / "agents.md")
    linked = tmp_path / "linked-ws"
    linked.symlink_to(world["ws"], target_is_directory=True)
    system, report = await _turn(make_kernel, linked)
    assert "Work carefully." in system and "not loaded" not in system
    assert all(f["not_loaded"] is None for f in report["files"])


async def test_a_link_swapped_in_while_the_file_is_opened_cannot_win(make_kernel, world, platform, monkeypatch: pytest.MonkeyPatch) -> None:
    agents = world["ws"] / "AGENTS.md"
    agents.write_text("Work carefully.\n")  # a plain file inside when anything looks at the path
    real_open = os.open
    swapped: list[str] = []

    def open_after_a_swap(path, flags, *args, **kwargs):  # noqa: ANN001, ANN202
        if os.fspath(path) == os.fspath(agents) and not swapped:
            agents.unlink()  # the attacker's move, between any check of the path and the open
            agents.symlink_to(world["secret"])
            swapped.append("done")
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", open_after_a_swap)
    system, report = await _turn(make_kernel, world["ws"])
    assert swapped
    assert "SECRET-4711" not in system
    assert "[AGENTS.md was not loaded: " in system


def test_clawbot_context_says_which_file_was_not_loaded_and_why(world, tmp_path: Path) -> None:
    _absolute(world)
    (tmp_path / "clawbot.toml").write_text(f'[agents.defaults]\nworkspace = "{world["ws"]}"\n')
    result = run_cli("context", "--json", home=tmp_path)
    assert result.returncode == 0, result.stderr
    files = {f["name"]: f for f in json.loads(result.stdout)["files"]}
    assert files["AGENTS.md"]["not_loaded"].startswith(OUTSIDE)
    table = run_cli("context", "--show", home=tmp_path)
    assert "not loaded: it leads outside the" in table.stdout
    assert "SECRET-4711" not in table.stdout
