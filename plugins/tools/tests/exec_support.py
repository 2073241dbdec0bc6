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

from clawbot import TextBlock, ToolCall, ToolResult, TurnTrust
from clawbot.types import PluginContext
from clawbot_tools.config import ToolsSettings
from clawbot_tools.runtime import tools
from clawbot_tools.runtime.config import ExecSettings
from clawbot_tools.runtime.exec_policy import PolicyInput, Verdict, decide

SYSTEM_PATH = os.environ.get("PATH", os.defpath)
SECRET = "TOPSECRET-4711"
SHELLS = [shell for shell in ("/bin/sh", shutil.which("bash")) if shell]


def given(
    world: Path,
    *,
    path_value: str = SYSTEM_PATH,
    confined: bool = False,
    hides_names: bool | None = None,
    guards_metadata: bool | None = None,
    **settings: Any,
) -> PolicyInput:
    """The gate's input for a line run in the workspace; allowlist mode with only the default safe bins.

    ``confined``: the command would run inside an OS sandbox (by default one that hides
    names, like bwrap). The default, False, is the analysis alone, the strictest the gate gets."""
    settings.setdefault("allowlist", [])
    ws = os.path.realpath(world / "ws")
    return PolicyInput(
        settings=ExecSettings(**settings),
        cwd=ws,
        workspace=ws,
        path_value=path_value,
        home=str(world / "home"),
        confined=confined,
        hides_names=confined if hides_names is None else hides_names,
        guards_metadata=confined if guards_metadata is None else guards_metadata,
    )


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


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def running_with(marker: str) -> list[int]:
    """Host pids of live processes whose command line holds ``marker`` (pids a command sees
    inside bwrap's namespace mean nothing out here, so tests find processes by what they run)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as handle:
                    if marker.encode() in handle.read() and alive(int(entry)):
                        found.append(int(entry))
            except OSError:
                continue
    return found


async def contained(command: str, world: Path, gate: Harness) -> None:
    """The line cannot reach the secret or leave a payload: the analysis alone (no sandbox)
    asks, and in the sandbox it either asks too or runs without reaching anything."""
    bare = Harness.in_world(world, session="agent:main:bare", sandbox="off")
    try:
        result = await bare.exec(command, timeout=20)
        assert result.details.get("status") == "approval-unavailable", ("without a sandbox", command, text_of(result))
    finally:
        await bare.close()
    result = await gate.exec(command, timeout=20)
    assert result.details.get("status") in ("approval-unavailable", "exited"), (command, text_of(result))
    assert SECRET not in text_of(result) and traces(world) == [], ("in the sandbox", command, text_of(result))


def text_of(result: ToolResult) -> str:
    return "".join(block.text for block in result.content if isinstance(block, TextBlock))


class Harness:
    """The real exec/process tools in workspace ``ws``; no chat, so a line that asks never runs."""

    def __init__(self, ws: Path, state: Path, env: dict[str, str], session: str = "agent:main:test", **exec_settings: Any) -> None:
        self.ws = ws
        self.session = session
        self.closers: list[Any] = []
        ctx = PluginContext(plugin_name="tools", state_dir=state, env=env, on_close=self.closers.append)
        self.tools = {t.name: t for t in tools(ToolsSettings(exec=ExecSettings(**exec_settings)), ctx)}

    @classmethod
    def in_world(cls, world: Path, session: str = "agent:main:gate", **exec_settings: Any) -> Harness:
        """In ``world/ws``, with ``world/home`` as HOME and the system PATH."""
        env = {"PATH": SYSTEM_PATH, "HOME": str(world / "home"), "LANG": "C.UTF-8"}
        return cls(world / "ws", world / "state", env, session, **exec_settings)

    async def call(self, name: str, session: str | None = None, trust: TurnTrust = TurnTrust.OWNER, **arguments: Any) -> ToolResult:
        """``trust``: whose turn makes the call (the owner's unless told)."""
        result = await self.tools[name].handler(ToolCall("c1", name, arguments, "main", session or self.session, self.ws, trust=trust))
        assert isinstance(result, ToolResult)
        return result

    async def exec(self, command: str, **arguments: Any) -> ToolResult:
        return await self.call("exec", command=command, **arguments)

    async def start(self, command: str, **arguments: Any) -> str:
        """Start ``command`` and return its process id; it must have moved to the background."""
        result = await self.exec(command, **arguments)
        assert result.details["status"] == "running", text_of(result)
        return result.details["process_id"]

    async def process(self, action: str, **arguments: Any) -> ToolResult:
        return await self.call("process", action=action, **arguments)

    async def close(self) -> None:
        for closer in self.closers:
            await closer()
