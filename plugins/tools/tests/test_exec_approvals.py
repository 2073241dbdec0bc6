"""exec asks before running what is not allowed, and acts on the user's answer.

Through the kernel's real services (the test kit's ``TestAgents``: the approval broker and a
turn's tool services) with a recording gateway port, and once end to end through the real
gateway, the fake channel and ``/approve`` typed in the chat.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import clawbot_tools.plugin
import pytest
from clawbot import (
    LLMProvider,
    Message,
    ModelInfo,
    Role,
    StopReason,
    TextBlock,
    ToolCall,
    ToolCallBlock,
    ToolResult,
    Usage,
)
from clawbot.testing import TestAgents, approval_notice
from clawbot.types import (
    ApprovalDecision,
    ApprovalTicket,
    InboundMessage,
    OutboundMessage,
    ToolServices,
    TurnTrust,
)
from clawbot_tools.runtime.approval_flow import pending
from clawbot_tools.runtime.context import Job
from clawbot_tools.runtime.exec_policy import Verdict
from clawbot_tools.runtime.executables import Program

SESSION = "agent:main:main"
RM = os.path.realpath("/bin/rm")
TOUCH = os.path.realpath("/usr/bin/touch")
MKDIR = os.path.realpath("/usr/bin/mkdir")


class RecordingPort:
    """The gateway side of system events: records what would start a turn."""

    def __init__(self) -> None:
        self.events: list[str] = []

    def channel_names(self) -> list[str]:
        return ["fake"]

    async def deliver(self, message: OutboundMessage, session_key: str | None, *, notice: bool = False) -> None:
        pass

    def inject(self, origin: InboundMessage, session_key: str, text: str) -> None:
        self.events.append(text)


class Setup:
    def __init__(self, kernel: Any, agents: TestAgents, port: RecordingPort, ws: Path) -> None:
        self.kernel, self.agents, self.port, self.ws = kernel, agents, port, ws
        self.origin = InboundMessage(channel="fake", peer_id="alice", text="do it", from_owner=True)

    def services(self, agent_id: str = "main", session: str = SESSION, *, with_port: bool = True) -> ToolServices:
        agents = self.agents if with_port else self.kernel.agents()
        return agents.tool_services(agent_id, session, origin=self.origin if with_port else None, trust=TurnTrust.OWNER)

    async def exec(self, command: str, *, agent_id: str = "main", with_port: bool = True, **arguments: Any) -> ToolResult:
        services = self.services(agent_id, with_port=with_port)
        call = ToolCall("c1", "exec", {"command": command, **arguments}, agent_id, SESSION, self.ws, services)
        return await self.kernel.tools["exec"].handler(call)

    async def answer(self, result: ToolResult, decision: ApprovalDecision) -> str:
        """What the gateway does for /approve: confirm, then act."""
        return await self.agents.approvals.decide(SESSION, result.details["approval_id"], decision)


@pytest.fixture
async def setup(make_kernel: Any, tmp_path: Path):
    ws = tmp_path / "ws"
    ws.mkdir()
    kernel = await make_kernel(plugins={"tools": clawbot_tools.plugin}, env={"PATH": os.environ.get("PATH", os.defpath)})
    port = RecordingPort()
    agents = kernel.agents(chat=port)
    yield Setup(kernel, agents, port, ws)
    await agents.aclose()
    await kernel.aclose()


def text_of(result: ToolResult) -> str:
    return "".join(block.text for block in result.content if isinstance(block, TextBlock))


async def test_allow_once_runs_the_exact_command_once_and_reports_back(setup: Setup) -> None:
    victim = setup.ws / "victim.txt"
    victim.write_text("bye")
    result = await setup.exec("ls && rm victim.txt")
    text = text_of(result)
    assert not result.is_error and result.details["status"] == "approval-pending"
    assert text.startswith("Approval required (approval-pending)")
    approval_id = result.details["approval_id"]
    assert f"Reply with: /approve {approval_id} allow-once" in text
    assert "Command:\nls && rm victim.txt\n" in text and f"Reason: {RM} is not in the exec allowlist" in text
    assert f"/deny {approval_id}" in text and f"/approve {approval_id} allow-always" in text and "Expires: " in text
    assert result.details["command"] == "ls && rm victim.txt"
    assert victim.exists() and setup.port.events == []  # nothing ran while waiting

    notice = await setup.answer(result, ApprovalDecision.ALLOW_ONCE)
    assert "Approved (once)" in notice
    assert not victim.exists()
    [event] = setup.port.events
    assert event.startswith("exec p-") and "(approved command): exit code 0" in event and "Command: ls && rm victim.txt" in event
    process_id = re.match(r"exec (p-\w+)", event).group(1)
    log = await setup.kernel.tools["process"].handler(ToolCall("c2", "process", {"action": "list"}, "main", SESSION, setup.ws))
    assert process_id in text_of(log)

    victim.write_text("again")
    again = await setup.exec("ls && rm victim.txt")
    assert again.details["status"] == "approval-pending" and again.details["approval_id"] != approval_id
    assert victim.exists()


async def test_allow_always_remembers_the_executables_for_that_agent(setup: Setup) -> None:
    first = await setup.exec("touch one.txt")
    assert first.details["allow_always"] is True
    notice = await setup.answer(first, ApprovalDecision.ALLOW_ALWAYS)
    assert "Approved (always)" in notice and (setup.ws / "one.txt").exists()
    stored = json.loads((setup.kernel.state_dir / "exec-approvals.json").read_text())
    assert stored["version"] == 3
    assert stored["agents"]["main"] == {"programs": [{"path": TOUCH, "name": "touch"}], "commands": []}
    second = await setup.exec("touch two.txt && ls")
    assert not second.is_error and second.details["status"] == "exited" and (setup.ws / "two.txt").exists()
    other_agent = await setup.exec("touch three.txt", agent_id="helper")
    assert other_agent.details["status"] == "approval-pending" and not (setup.ws / "three.txt").exists()


async def test_deny_runs_nothing_and_posts_nothing(setup: Setup) -> None:
    (setup.ws / "victim.txt").write_text("keep")
    result = await setup.exec("rm victim.txt")
    notice = await setup.answer(result, ApprovalDecision.DENY)
    assert notice.startswith("Denied")
    assert (setup.ws / "victim.txt").exists() and setup.port.events == []


async def test_destructive_commands_are_never_offered_allow_always(setup: Setup) -> None:
    (setup.ws / "build").mkdir()
    result = await setup.exec("rm -rf build")
    text = text_of(result)
    assert result.details["status"] == "approval-pending" and result.details["allow_always"] is False
    assert "destructive pattern: rm -r (recursive delete)" in text and "allow-always" not in text
    refused = await setup.answer(result, ApprovalDecision.ALLOW_ALWAYS)
    assert "cannot be allowed always" in refused and (setup.ws / "build").exists()
    await setup.answer(result, ApprovalDecision.ALLOW_ONCE)
    assert not (setup.ws / "build").exists()


async def test_a_run_without_a_gateway_cannot_ask_and_says_how_to_allow(setup: Setup) -> None:
    (setup.ws / "victim.txt").write_text("keep")
    result = await setup.exec("rm victim.txt", with_port=False)
    text = text_of(result)
    assert result.is_error and result.details["status"] == "approval-unavailable"
    assert "no gateway is running" in text and f'allowlist = ["{RM}"]' in text
    assert (setup.ws / "victim.txt").exists()


async def test_notify_on_exit_posts_once_unless_the_model_saw_the_end(make_kernel: Any, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    kernel = await make_kernel(
        plugins={"tools": clawbot_tools.plugin},
        config='[plugins.tools.exec]\nsecurity = "full"\n',
        env={"PATH": os.environ.get("PATH", os.defpath)},
    )
    port = RecordingPort()
    agents = kernel.agents(chat=port)
    services = agents.tool_services("main", SESSION, origin=InboundMessage(channel="fake", peer_id="alice", text="x"))

    async def run(name: str, **arguments: Any) -> ToolResult:
        return await kernel.tools[name].handler(ToolCall("c", name, arguments, "main", SESSION, ws, services))

    first = await run("exec", command="sleep 0.3; echo done", yield_ms=50)
    assert "A system event will also tell you" in text_of(first)
    async with asyncio.timeout(5):
        while not port.events:
            await asyncio.sleep(0.02)
    assert port.events[0].startswith(f"exec {first.details['process_id']} finished (background command): exit code 0")
    second = await run("exec", command="sleep 0.3; echo done", yield_ms=50)
    await run("process", action="poll", id=second.details["process_id"], wait_ms=5000)
    await asyncio.sleep(0.1)
    assert len(port.events) == 1  # the model polled the end itself
    await agents.aclose()
    await kernel.aclose()


def test_the_pending_text_shows_a_multiline_command_verbatim() -> None:
    ticket = ApprovalTicket("ab12cd", datetime.now(UTC) + timedelta(minutes=30), "/approve ab12cd allow-once")
    command = "cd sub && make\nrm -f out | tee log; echo done"
    job = Job(command, "/ws", {}, 60.0, SESSION, "main")
    verdict = Verdict("ask", ("/usr/bin/make is not in the exec allowlist", "cannot be checked: x"), programs=(Program("/usr/bin/make", "make"),))
    result = pending(ticket, job, verdict, allow_always=False)
    text = text_of(result)
    assert f"Command:\n{command}\n" in text
    assert "Reasons:\n- /usr/bin/make is not in the exec allowlist\n- cannot be checked: x" in text
    assert "Reply with: /approve ab12cd allow-once\n" in text and "allow-always" not in text
    assert re.search(r"Expires: \d{4}-\d\d-\d\d \d\d:\d\d UTC \(in (29|30) min\)", text)
    assert dict(result.details) | {"expires_at": None} == {
        "status": "approval-pending",
        "approval_id": "ab12cd",
        "command": command,
        "reasons": list(verdict.reasons),
        "expires_at": None,
        "allow_always": False,
    }


# --- end to end: the chat, /approve, the system event turn ---------------------------------


class Scripted(LLMProvider):
    name = "scripted"

    def __init__(self, *replies: str | list[ToolCallBlock]) -> None:
        self.replies = list(replies)
        self.requests: list[Any] = []

    def model_info(self, model_id: str) -> ModelInfo:
        return ModelInfo(model_id, context_window=200_000)

    async def complete(self, request: Any, on_text: Any = None) -> Message:
        self.requests.append(request)
        reply = self.replies.pop(0) if self.replies else "done"
        if isinstance(reply, str):
            return Message(Role.ASSISTANT, (TextBlock(reply),), usage=Usage(10, 2), stop_reason=StopReason.END_TURN)
        return Message(Role.ASSISTANT, tuple(reply), usage=Usage(10, 2), stop_reason=StopReason.TOOL_USE)


async def test_approve_in_the_chat_runs_the_command_and_the_model_reports(make_kernel: Any, fake_channel: Any) -> None:
    command = "ls && rm victim.txt"
    provider = Scripted(
        [ToolCallBlock(id="c1", name="exec", arguments={"command": command})],
        "Please approve the command.",
        "Deleted victim.txt.",
    )
    kernel = await make_kernel(
        plugins={"tools": clawbot_tools.plugin, "fake": fake_channel.as_plugin()},
        env={"PATH": os.environ.get("PATH", os.defpath)},
    )
    agents = kernel.agents()
    conversation = await agents.conversation(provider, model="m")
    ws = conversation.workspace
    ws.mkdir(parents=True, exist_ok=True)
    (ws / "victim.txt").write_text("bye")
    gateway = agents.gateway()
    task = asyncio.create_task(gateway.run([fake_channel]))
    await fake_channel.wait_started()

    await fake_channel.inject("delete victim.txt", peer_id="alice", from_owner=True)
    pending_text = provider.requests[1].messages[-1].text
    approval_id = re.search(r"Reply with: /approve (\w+) allow-once", pending_text).group(1)
    notice, relay = fake_channel.texts()
    assert notice.startswith(f"Approval needed ({approval_id}): exec wants to run the command below\n")  # sent by the kernel
    assert f"\n\u2502 {command}\nReply /approve {approval_id}" in notice
    assert relay == "Please approve the command." and (ws / "victim.txt").exists()

    await fake_channel.inject(f"/approve {approval_id}", peer_id="alice", from_owner=True)
    async with asyncio.timeout(10):
        while fake_channel.texts()[-1] != "Deleted victim.txt.":
            await asyncio.sleep(0.02)
    assert not (ws / "victim.txt").exists()
    assert fake_channel.texts()[-2] == f"Approved (once); exec is running:\n\u2502 {command}"
    event = provider.requests[-1].messages[-1].text
    assert "(approved command): exit code 0" in event and f"Command: {command}" in event
    gateway.stop()
    await task
    await agents.aclose()
    await kernel.aclose()


# --- what an approval grants, and what it remembers ------------------------------------------


async def test_a_turn_started_by_someone_who_may_not_approve_is_refused_at_once(setup: Setup) -> None:
    setup.origin = InboundMessage(channel="fake", peer_id="group", text="run it", chat_type="group", sender_id="mallory")
    result = await setup.exec("touch pwned.txt")
    assert result.is_error and result.details["status"] == "refused", text_of(result)
    assert "Nothing ran" in text_of(result) and not (setup.ws / "pwned.txt").exists()
    assert setup.agents.approvals.pending(SESSION) == []  # nothing left waiting for the owner


def notice_of(setup: Setup) -> str:
    """The kernel's own notice for the request that is waiting (what the owner reads)."""
    [(ticket, request)] = setup.agents.approvals.requests(SESSION)
    return approval_notice(ticket, request)


async def test_the_notice_says_what_an_approval_grants(setup: Setup) -> None:
    from clawbot_tools.runtime.sandbox import choose

    result = await setup.exec("mkdir new", env={"LANG": "C", "NO_COLOR": "1"})
    notice = notice_of(setup)
    assert "Runs: " in notice and "no network" in notice and f"Directory: {os.path.realpath(setup.ws)}" in notice
    assert "Environment it adds: LANG=C NO_COLOR=1" in notice and "Input:" not in notice  # no input: /dev/null, the default
    mechanism = choose("auto").mechanism.name
    covered = f"{MKDIR} with any arguments, inside the sandbox ({mechanism})" if mechanism != "off" else "this exact command"
    assert f"allow-always also remembers: {covered}" in notice
    await setup.answer(result, ApprovalDecision.DENY)

    for command, arguments, words in [
        ("ls", {"network": True}, "with network access"),  # ls runs unasked on its own
        ("ls", {"sandbox": False}, "OUTSIDE the sandbox"),
        ("touch b.txt", {"interactive": True}, "Input: interactive: each text the agent sends to it asks you again"),
    ]:
        asked = await setup.exec(command, **arguments)
        assert asked.details["status"] == "approval-pending", (arguments, text_of(asked))
        assert words in notice_of(setup), (arguments, notice_of(setup))
        await setup.answer(asked, ApprovalDecision.DENY)


async def test_full_mode_still_asks_before_leaving_the_sandbox_or_using_the_network(make_kernel: Any, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    kernel = await make_kernel(
        plugins={"tools": clawbot_tools.plugin},
        env={"PATH": os.environ.get("PATH", os.defpath)},
        config='[plugins.tools.exec]\nsecurity = "full"\n',
    )
    agents = kernel.agents(chat=RecordingPort())
    try:
        services = agents.tool_services("main", SESSION, origin=InboundMessage(channel="fake", peer_id="a", text="x", from_owner=True), trust=TurnTrust.OWNER)
        for arguments in ({"network": True}, {"sandbox": False}):
            call = ToolCall("c1", "exec", {"command": "touch x.txt", **arguments}, "main", SESSION, ws, services)
            result = await kernel.tools["exec"].handler(call)
            assert result.details["status"] == "approval-pending", text_of(result)
        assert not (ws / "x.txt").exists()
    finally:
        await agents.aclose()
        await kernel.aclose()


async def test_allow_always_for_a_program_that_runs_code_remembers_only_the_exact_command(setup: Setup) -> None:
    (setup.ws / "a.txt").write_text("one\n")
    first = await setup.exec("sed -n p a.txt")  # sed runs code from its arguments (e): never remembered as a program
    assert first.details["allow_always"] is True
    assert "allow-always also remembers: this exact command" in notice_of(setup)
    await setup.answer(first, ApprovalDecision.ALLOW_ALWAYS)
    stored = json.loads((setup.kernel.state_dir / "exec-approvals.json").read_text())
    [entry] = stored["agents"]["main"]["commands"]
    assert entry["command"] == "sed -n p a.txt" and stored["agents"]["main"]["programs"] == []
    again = await setup.exec("sed -n p a.txt")
    assert again.details["status"] == "exited" and text_of(again).startswith("one\n"), text_of(again)
    for other in ("sed -n p a.txt ", "sed -n 1p a.txt", "sed 'w b.txt' a.txt"):
        assert (await setup.exec(other)).details["status"] == "approval-pending", other
    with_network = await setup.exec("sed -n p a.txt", network=True)
    assert with_network.details["status"] == "approval-pending"  # the same line with a grant is another approval


async def test_a_version_1_approvals_file_is_still_read(setup: Setup) -> None:
    path = setup.kernel.state_dir / "exec-approvals.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"version": 1, "agents": {"main": [{"path": TOUCH, "name": "touch"}]}}))
    result = await setup.exec("touch one.txt")
    assert result.details["status"] == "exited", text_of(result)


async def test_an_approved_command_reads_nothing_unless_approved_as_interactive(setup: Setup) -> None:
    waiting = await setup.exec("sh -c 'read answer; echo got:$answer'")
    await setup.answer(waiting, ApprovalDecision.ALLOW_ONCE)
    [event] = setup.port.events
    assert "got:" in event and "got:y" not in event  # its input was /dev/null: read saw the end at once


async def test_writing_to_an_interactive_approved_command_asks_again(setup: Setup) -> None:
    process_tool = setup.kernel.tools["process"]

    async def process(action: str, **arguments: Any) -> ToolResult:
        call = ToolCall("c2", "process", {"action": action, **arguments}, "main", SESSION, setup.ws, setup.services())
        return await process_tool.handler(call)

    waiting = await setup.exec("sh -c 'read answer; echo got:$answer > answer.txt'", interactive=True)
    notice, commit = setup.agents.approvals.answer(SESSION, waiting.details["approval_id"], ApprovalDecision.ALLOW_ONCE, by_owner=True)
    commit()
    for _ in range(100):
        listed = await process("list")
        if listed.details["processes"]:
            break
        await asyncio.sleep(0.02)
    [running] = listed.details["processes"]
    write = await process("write", id=running["id"], data="rm -rf ~\n")
    assert write.details["status"] == "approval-pending", text_of(write)
    assert "rm -rf ~" in notice_of(setup) and not (setup.ws / "answer.txt").exists()
    notice, commit = setup.agents.approvals.answer(SESSION, write.details["approval_id"], ApprovalDecision.ALLOW_ONCE, by_owner=True)
    commit()
    await setup.agents.approvals.drain()
    assert (setup.ws / "answer.txt").read_text() == "got:rm -rf ~\n"
