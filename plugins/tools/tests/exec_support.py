"""What the exec gate's tests share: a verdict for a line, and the real exec tool without a chat.

``world`` is a directory holding ``ws`` (the workspace) and ``home``; each test module builds
its own world fixture (what lies around the workspace differs per table).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

from clawbot import TextBlock, ToolCall, ToolResult
from clawbot.types import PluginContext
from clawbot_tools.config import ToolsSettings
from clawbot_tools.runtime import tools
from clawbot_tools.runtime.config import ExecSettings
from clawbot_tools.runtime.exec_policy import PolicyInput, Verdict, decide

SYSTEM_PATH = os.environ.get("PATH", os.defpath)
SECRET = "TOPSECRET-4711"
SHELLS = [shell for shell in ("/bin/sh", shutil.which("bash")) if shell]


def given(world: Path, *, path_value: str = SYSTEM_PATH, **settings: Any) -> PolicyInput:
    """The gate's input for a line run in the workspace; allowlist mode with only the default safe bins."""
    settings.setdefault("allowlist", [])
    ws = os.path.realpath(world / "ws")
    return PolicyInput(settings=ExecSettings(**settings), cwd=ws, workspace=ws, path_value=path_value, home=str(world / "home"))


def verdict(command: str, world: Path, **settings: Any) -> Verdict:
    return decide(command, given(world, **settings))


def traces(world: Path) -> list[str]:
    """Evidence that a payload ran: ``pwned*`` in the workspace, ``outside*`` beside it."""
    found = [p.name for p in (world / "ws").glob("pwned*")]
    found += [p.name for p in world.glob("outside*")]
    return found


def run_if_allowed(command: str, world: Path, shell: str) -> tuple[Verdict, str]:
    """The gate's verdict, and the output of the line run by ``shell`` if the gate let it run."""
    command = command.replace("{world}", str(world))
    found = verdict(command, world)
    if found.action != "run":
        return found, ""
    env = {"PATH": SYSTEM_PATH, "HOME": str(world / "home"), "LANG": "C.UTF-8", "PWD": str(world / "ws")}
    done = subprocess.run([shell, "-c", command], cwd=world / "ws", env=env, capture_output=True, text=True, timeout=20)
    return found, done.stdout + done.stderr


def assert_blocked(command: str, world: Path) -> None:
    """The gate asks, and running the line anyway under each shell shows no payload or secret."""
    for shell in SHELLS:
        found, output = run_if_allowed(command, world, shell)
        assert found.action == "ask", (shell, command, found)
        assert SECRET not in output and traces(world) == [], (shell, command, output)


def text_of(result: ToolResult) -> str:
    return "".join(block.text for block in result.content if isinstance(block, TextBlock))


class Harness:
    """The real exec/process tools in ``world/ws``; no chat, so a line that asks never runs."""

    def __init__(self, world: Path, session: str = "agent:main:gate", **exec_settings: Any) -> None:
        self.ws = world / "ws"
        self.session = session
        self.closers: list[Any] = []
        env = {"PATH": SYSTEM_PATH, "HOME": str(world / "home"), "LANG": "C.UTF-8"}
        ctx = PluginContext(plugin_name="tools", config=None, state_dir=world / "state", env=env, on_close=self.closers.append)
        self.tools = {t.name: t for t in tools(ToolsSettings(exec=ExecSettings(**exec_settings)), ctx)}

    async def call(self, name: str, session: str | None = None, **arguments: Any) -> ToolResult:
        call = ToolCall("c1", name, arguments, "main", session or self.session, self.ws)
        return await self.tools[name].handler(call)

    async def close(self) -> None:
        for closer in self.closers:
            await closer()

