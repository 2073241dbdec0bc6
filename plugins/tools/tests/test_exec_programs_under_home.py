"""Programs installed under the home folder (pyenv's shims, ~/.local/bin) are hidden by the
sandbox like the rest of the home folder: a command that needs one says how to open it."""

from __future__ import annotations

from pathlib import Path

import pytest

from .exec_support import SYSTEM_PATH, Harness, text_of
from .sandbox_world import usable


def _home_with_a_program(tmp_path: Path) -> dict[str, str]:
    home, ws = tmp_path / "home", tmp_path / "ws"
    (home / ".local" / "bin").mkdir(parents=True)
    ws.mkdir()
    tool = home / ".local" / "bin" / "hello-tool"
    tool.write_text("#!/bin/sh\necho hello from home\n")
    tool.chmod(0o755)
    return {"PATH": f"{home / '.local' / 'bin'}:{SYSTEM_PATH}", "HOME": str(home), "LANG": "C.UTF-8"}


@pytest.mark.parametrize("sandbox", ["bwrap", "landlock"])
async def test_a_program_under_home_is_not_found_and_the_result_says_how_to_open_it(tmp_path: Path, sandbox: str) -> None:
    usable(sandbox)
    env = _home_with_a_program(tmp_path)
    gate = Harness(tmp_path / "ws", tmp_path / "state", env, security="full", sandbox=sandbox)
    opened = Harness(tmp_path / "ws", tmp_path / "state2", env, security="full", sandbox=sandbox, sandbox_read=["~/.local/bin"])
    try:
        hidden = await gate.exec("hello-tool")
        found = await opened.exec("hello-tool")
    finally:
        await gate.close()
        await opened.close()
    assert hidden.details["exit_code"] in (126, 127), text_of(hidden)
    assert "the sandbox hides these PATH directories" in text_of(hidden) and str(tmp_path / "home" / ".local" / "bin") in text_of(hidden)
    assert "sandbox_read" in text_of(hidden)
    assert found.details["exit_code"] == 0 and "hello from home" in text_of(found), text_of(found)
    assert "hides these PATH" not in text_of(found)


def test_doctor_names_the_path_directories_the_sandbox_hides(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    usable("bwrap")
    env = {k: v for k, v in os.environ.items() if not k.startswith("CLAWBOT_")}
    home_env = _home_with_a_program(tmp_path)
    env.update(home_env, CLAWBOT_HOME=str(tmp_path / "home" / ".clawbot"), NO_COLOR="1", COLUMNS="250")
    env["PATH"] = f"{home_env['PATH']}:{os.path.dirname(sys.executable)}"
    done = subprocess.run([sys.executable, "-m", "clawbot.cli.main", "doctor"], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    text = " ".join(done.stdout.split())
    assert "these PATH directories are hidden inside the sandbox" in text, done.stdout
    assert str(tmp_path / "home" / ".local" / "bin") in text and "sandbox_read" in text


async def test_a_workspace_under_home_is_not_named_as_hidden(tmp_path: Path) -> None:
    usable("bwrap")
    env = _home_with_a_program(tmp_path)
    ws = tmp_path / "home" / "project"
    (ws / ".venv" / "bin").mkdir(parents=True)
    env["PATH"] = f"{ws / '.venv' / 'bin'}:{env['PATH']}"
    gate = Harness(ws, tmp_path / "state", env, security="full", sandbox="bwrap")
    try:
        missing = await gate.exec("no-such-program-here")
    finally:
        await gate.close()
    assert missing.details["exit_code"] == 127
    assert str(tmp_path / "home" / ".local" / "bin") in text_of(missing)
    assert str(ws / ".venv" / "bin") not in text_of(missing)  # inside the workspace: it is there
