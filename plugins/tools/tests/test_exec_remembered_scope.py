""" "Allow always" remembers no more than the notice said, and only where it holds.

* A program remembered "with any arguments, inside the sandbox" runs unasked only inside a
  sandbox that keeps its arguments harmless: not unconfined (``cat ~/.ssh/id_rsa``), and for
  chmod and touch not under Landlock, which does not mediate modes and times.
* Without a sandbox, allow-always offers the exact command only, and the notice says where
  commands run.
* An exact command remembered as approved runs as approved again: input /dev/null unless the
  approval said interactive, and text sent to it later asks again.

Through the kernel's approval broker and services, real commands in a tmp world.
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import clawbot_tools.plugin
import pytest
from clawbot.types import ApprovalDecision

from .exec_support import Harness, given
from .sandbox_world import usable
from .test_exec_approvals import SESSION, RecordingPort, Setup, text_of


async def _setup(make_kernel: Any, tmp_path: Path, sandbox: str) -> Setup:
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    kernel = await make_kernel(
        plugins={"tools": clawbot_tools.plugin},
        env={"PATH": os.environ.get("PATH", os.defpath)},
        config=f'[plugins.tools.exec]\nsandbox = "{sandbox}"\n',
    )
    return Setup(kernel, kernel.agents(chat=RecordingPort()), RecordingPort(), ws)


@pytest.fixture
async def setups(make_kernel: Any, tmp_path: Path):
    made: list[Setup] = []

    async def make(sandbox: str) -> Setup:
        made.append(await _setup(make_kernel, tmp_path, sandbox))
        return made[-1]

    yield make
    for setup in made:
        await setup.agents.aclose()
        await setup.kernel.aclose()


async def test_without_a_sandbox_allow_always_remembers_the_exact_command_only(setups, clawbot_home: Path) -> None:
    setup = await setups("off")
    (clawbot_home / ".ssh").mkdir()
    (clawbot_home / ".ssh" / "id_rsa").write_text("SSH-CANARY-77\n")
    (setup.ws / "notes.txt").write_text("hello\n")
    first = await setup.exec("cat notes.txt")
    assert first.details["status"] == "approval-pending", text_of(first)
    notice = " ".join(text_of(first).split())
    assert "inside the sandbox" not in notice and "this exact command" in notice, notice
    await setup.answer(first, ApprovalDecision.ALLOW_ALWAYS)
    again = await setup.exec(f"cat {clawbot_home}/.ssh/id_rsa")
    assert again.details["status"] == "approval-pending" and "SSH-CANARY-77" not in text_of(again), text_of(again)
    same = await setup.exec("cat notes.txt")
    assert same.details["status"] == "exited" and "hello" in text_of(same), text_of(same)  # the exact command was remembered


def _remembering(world: Path, *names: str) -> None:
    programs = [{"path": os.path.realpath(f"/usr/bin/{name}"), "name": name} for name in names]
    (world / "state").mkdir(parents=True, exist_ok=True)
    approvals = {"version": 2, "agents": {"main": {"programs": programs, "commands": []}}}
    (world / "state" / "exec-approvals.json").write_text(json.dumps(approvals))


def _world(base: Path) -> Path:
    (base / "home" / ".ssh").mkdir(parents=True)
    (base / "home" / ".ssh" / "id_rsa").write_text("KEY\n")
    (base / "home" / ".ssh" / "id_rsa").chmod(0o600)
    (base / "home" / ".bashrc").write_text("# rc\n")
    (base / "ws").mkdir()
    return base


# sandbox -> whether cat, chmod and touch remembered inside a sandbox still run unasked
REMEMBERED_RUNS = {"bwrap": True, "landlock": False, "off": False}


@pytest.mark.parametrize("sandbox", sorted(REMEMBERED_RUNS))
async def test_programs_remembered_for_any_arguments_need_a_sandbox_that_keeps_them_harmless(tmp_path: Path, sandbox: str) -> None:
    if sandbox != "off":
        usable(sandbox)
    world = _world(tmp_path)
    _remembering(world, "cat", "chmod", "touch")
    gate = Harness.in_world(world, sandbox=sandbox)
    key, rc = world / "home" / ".ssh" / "id_rsa", world / "home" / ".bashrc"
    try:
        inside = await gate.exec("touch made && chmod 600 made && cat made")
        metadata = await gate.exec(f"chmod 666 {key}; touch -d 2001-01-01 {rc}")
        reading = await gate.exec(f"cat {key}")
    finally:
        await gate.close()
    assert (inside.details["status"] == "exited") is REMEMBERED_RUNS[sandbox], text_of(inside)
    if sandbox == "landlock":  # cat still runs unasked; chmod and touch ask
        assert reading.details["status"] == "exited" and "KEY" not in text_of(reading)
    assert metadata.details["status"] != "exited" or sandbox == "bwrap", text_of(metadata)
    assert oct(key.stat().st_mode & 0o777) == "0o600" and rc.stat().st_mtime > 1e9 + 1e8
    assert "KEY" not in text_of(reading)


@pytest.mark.parametrize(("sandbox", "offered"), [("bwrap", "programs"), ("landlock", "command"), ("off", "command")])
def test_chmod_is_offered_for_any_arguments_only_where_the_sandbox_guards_modes(tmp_path: Path, sandbox: str, offered: str) -> None:
    from clawbot_tools.runtime.exec_policy import decide

    world = _world(tmp_path)
    confined = sandbox != "off"
    found = decide("chmod +x run.sh", given(world, confined=confined, hides_names=sandbox == "bwrap", guards_metadata=sandbox == "bwrap"))
    assert found.action == "ask" and found.always == offered


async def test_a_remembered_command_runs_as_approved_with_no_input_and_writes_to_it_ask(setups, tmp_path: Path) -> None:
    setup = await setups("auto")
    outside = tmp_path / "outside"
    outside.mkdir()
    first = await setup.exec("perl", sandbox=False)
    assert first.details["status"] == "approval-pending" and "Input: interactive" not in text_of(first)
    await setup.answer(first, ApprovalDecision.ALLOW_ALWAYS)
    again = await setup.exec("perl", sandbox=False, yield_ms=300)
    assert again.details["status"] == "exited", text_of(again)  # perl read /dev/null and ended
    interactive = await setup.exec("perl", sandbox=False, interactive=True, yield_ms=300)
    assert interactive.details["status"] == "approval-pending"  # a different grant: asked again
    _notice, commit = setup.agents.approvals.answer(SESSION, interactive.details["approval_id"], ApprovalDecision.ALLOW_ALWAYS, by_owner=True)
    commit()  # not drained: the approved perl waits for input until the end of the test
    for _ in range(100):
        if await _remembered(setup):
            break
        await asyncio.sleep(0.05)
    running = await setup.exec("perl", sandbox=False, interactive=True, yield_ms=300)
    assert running.details["status"] == "running", text_of(running)
    payload = f"open F, q(>{outside}/pwned); print F 1;\n"
    write = await setup.kernel.tools["process"].handler(_call(setup, "process", action="write", id=running.details["process_id"], data=payload, eof=True))
    assert write.details["status"] == "approval-pending", text_of(write)
    await asyncio.sleep(0.3)
    assert not (outside / "pwned").exists()


async def _remembered(setup: Setup) -> bool:
    """Whether the interactive grant is stored (it is, before the approved command starts)."""
    stored = [json.loads(path.read_text()) for path in Path(setup.kernel.state_dir).rglob("exec-approvals.json")]
    return any(entry.get("interactive") for data in stored for agent in data["agents"].values() for entry in agent["commands"])


def _call(setup: Setup, tool: str, **arguments: Any):
    from clawbot import ToolCall

    return ToolCall("c1", tool, arguments, "main", SESSION, setup.ws, setup.services())


@pytest.mark.parametrize("later", ["landlock", "off"])
async def test_a_command_remembered_in_one_sandbox_asks_again_where_a_weaker_one_runs(setups, later: str, clawbot_home: Path) -> None:
    usable("bwrap")
    if later != "off":
        usable(later)
    (clawbot_home / ".ssh").mkdir()
    (clawbot_home / ".ssh" / "id_rsa").write_text("SSH-CANARY-31337\n")
    first = await setups("bwrap")
    (first.ws / "build.py").write_text("print('building')\n")
    asked = await first.exec("python3 build.py")
    assert "Runs: inside the sandbox (bwrap)" in text_of(asked), text_of(asked)
    await first.answer(asked, ApprovalDecision.ALLOW_ALWAYS)
    assert (await first.exec("python3 build.py")).details["status"] == "exited"  # remembered under bwrap
    # the model rewrites the script (writing the workspace needs no approval), and the
    # sandbox is different now (another machine, a changed setting)
    (first.ws / "build.py").write_text(f"print(open({str(clawbot_home / '.ssh' / 'id_rsa')!r}).read())\n")
    second = await setups(later)
    again = await second.exec("python3 build.py")
    assert again.details["status"] == "approval-pending" and "SSH-CANARY-31337" not in text_of(again), text_of(again)
