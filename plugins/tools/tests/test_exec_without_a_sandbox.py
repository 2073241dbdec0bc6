"""On a machine where no sandbox can run, exec says so once and asks before touching files;
a sandbox the user insisted on makes exec refuse; `clawbot doctor` tells which is which.

"No sandbox here" is real, not pretended: the checks run inside bwrap, which lets nothing in
it create user namespaces (as on hardened distributions), under a seccomp filter that makes
Landlock's system calls fail as on a kernel without it (``without_landlock.py``). Without
user namespaces alone, Landlock still confines: that is checked here too, through exec.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from clawbot_tools.runtime.sandbox import SandboxPolicy

from .sandbox_world import PATH, run_sandboxed, usable

REPO = Path(__file__).resolve().parents[3]
WITHOUT_LANDLOCK = Path(__file__).with_name("without_landlock.py")

EXEC_SCRIPT = """
import asyncio, json, tempfile
from pathlib import Path
from clawbot import ToolCall
from clawbot.types import PluginContext
from clawbot_tools.config import ToolsSettings
from clawbot_tools.runtime import tools
from clawbot_tools.runtime.config import ExecSettings

async def main():
    report = {}
    tmp = Path(tempfile.mkdtemp())
    ws = tmp / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("x")
    for setting in ("auto", "bwrap", "off"):
        closers = []
        env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp / "home")}
        ctx = PluginContext(plugin_name="tools", state_dir=tmp / "state", env=env, on_close=closers.append)
        exec_tool = {t.name: t for t in tools(ToolsSettings(exec=ExecSettings(sandbox=setting)), ctx)}["exec"]
        runs = []
        for command in ("true", "echo hi > /dev/null", "head a.txt"):
            result = await exec_tool.handler(ToolCall("c1", "exec", {"command": command}, "main", "agent:main:t", ws))
            runs.append([result.details.get("status"), "".join(block.text for block in result.content)])
        report[setting] = runs
        for close in closers:
            await close()
    print(json.dumps(report))

asyncio.run(main())
"""


def inside_a_machine_without_any_sandbox(tmp_path: Path, line: str, env: dict[str, str] | None = None) -> str:
    return inside_a_machine_without_user_namespaces(tmp_path, f"{sys.executable} {WITHOUT_LANDLOCK} {line}", env)


def inside_a_machine_without_user_namespaces(tmp_path: Path, line: str, env: dict[str, str] | None = None) -> str:
    usable("bwrap")
    (tmp_path / "ws").mkdir()
    (tmp_path / "tmp").mkdir(mode=0o700)
    trees = tuple({os.path.realpath(path) for path in (sys.base_prefix, sys.prefix, REPO)})
    policy = SandboxPolicy(workspace=str(tmp_path / "ws"), temp_dir=str(tmp_path / "tmp"), read_only=trees)
    done = run_sandboxed("bwrap", line, policy, env={"PATH": PATH, **(env or {})}, timeout=120)
    return done.stdout


def test_without_any_sandbox_exec_says_so_once_and_asks_before_reading_files(tmp_path: Path) -> None:
    output = inside_a_machine_without_any_sandbox(tmp_path, f"{sys.executable} -c '{EXEC_SCRIPT}'")
    report = json.loads(output.splitlines()[-1])
    (first_status, first), (second_status, second), (third_status, third) = report["auto"]
    assert first_status == "exited" and first.startswith("Note: no OS sandbox is usable here (bwrap: "), first
    assert "exec asks the user before any command reads, lists or writes files by name" in first
    assert second_status == "exited" and "Note:" not in second  # said once
    assert third_status == "approval-unavailable" and "without a sandbox" in third, third
    for status, text in report["bwrap"]:  # insisted on, but unusable: nothing runs unconfined
        assert status == "refused" and 'the sandbox "bwrap" set in [plugins.tools.exec] sandbox cannot be used here' in text
    assert [status for status, _ in report["off"]][:2] == ["exited", "exited"]
    assert all("Note:" not in text for _, text in report["off"])  # the user chose it: no nagging


def test_doctor_says_which_sandbox_commands_run_in(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CLAWBOT_")}
    env.update({"CLAWBOT_HOME": str(tmp_path / "home"), "HOME": str(tmp_path / "home"), "NO_COLOR": "1", "COLUMNS": "250"})
    here = subprocess.run([sys.executable, "-m", "clawbot.cli.main", "doctor"], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    text = " ".join(here.stdout.split())
    usable("bwrap")
    assert "exec runs commands in the bwrap sandbox (tools)" in text, here.stdout
    assert "no network" in text

    inside = inside_a_machine_without_any_sandbox(
        tmp_path,
        f"{sys.executable} -m clawbot.cli.main doctor",
        env={"CLAWBOT_HOME": str(tmp_path / "ws" / "state"), "HOME": str(tmp_path / "ws"), "NO_COLOR": "1", "COLUMNS": "250"},
    )
    text = " ".join(inside.split())
    assert "no OS sandbox is usable" in text and "commands run unconfined" in text, inside
    assert "unprivileged user namespaces" in text and "not enabled in this kernel" in text  # the fixes


CONFINED_SCRIPT = """
import asyncio, json, socket, tempfile
from pathlib import Path
from clawbot import ToolCall
from clawbot.types import PluginContext
from clawbot_tools.config import ToolsSettings
from clawbot_tools.runtime import tools
from clawbot_tools.runtime.config import ExecSettings

async def main():
    tmp = Path(tempfile.mkdtemp())
    ws, home = tmp / "ws", tmp / "home"
    ws.mkdir()
    home.mkdir()
    (home / "secret").write_text("canary")
    listener = socket.create_server(("127.0.0.1", 0))
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home)}
    closers = []
    ctx = PluginContext(plugin_name="tools", state_dir=tmp / "state", env=env, on_close=closers.append)
    settings = ToolsSettings(exec=ExecSettings(security="full"))  # no analysis: only the sandbox stands in the way
    exec_tool = {t.name: t for t in tools(settings, ctx)}["exec"]
    port = listener.getsockname()[1]
    line = f"echo ok; cat {home}/secret; python3 -c \\"import socket; socket.create_connection((\\x27127.0.0.1\\x27, {port}))\\""
    result = await exec_tool.handler(ToolCall("c1", "exec", {"command": line}, "main", "agent:main:t", ws))
    listener.setblocking(False)
    try:
        listener.accept()
        reached = True
    except BlockingIOError:
        reached = False
    for close in closers:
        await close()
    print(json.dumps({"status": result.details.get("status"), "text": "".join(b.text for b in result.content), "reached": reached}))

asyncio.run(main())
"""


def test_without_user_namespaces_exec_still_runs_commands_under_landlock(tmp_path: Path) -> None:
    output = inside_a_machine_without_user_namespaces(tmp_path, f"{sys.executable} -c '{CONFINED_SCRIPT}'")
    report = json.loads(output.splitlines()[-1])
    assert report["status"] == "exited", report
    assert report["text"].startswith("ok\n") and "Note:" not in report["text"], report  # confined: nothing to warn about
    assert "canary" not in report["text"] and "Permission denied" in report["text"], report
    assert report["reached"] is False, report
