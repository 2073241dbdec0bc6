"""Tools reach sessions, channels, approvals and the clock through ``call.services``.

Real kernel, real session files, the real gateway with the fake channel; only the model is
scripted. The session tools and ``message`` are the ones clawbot-tools ships.
"""

from __future__ import annotations

import asyncio
import json
import re
from datetime import datetime
from zoneinfo import ZoneInfo

import clawbot_tools.plugin
from clawbot import ApprovalDecision, ApprovalRequest, ServiceUnavailable, Tool, ToolCall, ToolResult
from clawbot.agent.models import ModelChoice
from clawbot.agent.runtime import AgentRuntime
from clawbot.gateway.runner import Gateway
from clawbot.paths import expand_user_path
from clawbot.testing import plugin_from_hooks

from .scripted import ScriptedProvider, call

TWO_AGENTS = (
    '[agents.defaults]\ntimezone = "Asia/Tokyo"\n\n[tools]\nagent_to_agent = ["main", "helper"]\n\n'
    '[[agents.list]]\nid = "main"\ndefault = true\n\n[[agents.list]]\nid = "helper"\nname = "Helper"\n'
)


async def _runtime(make_kernel, provider, *, config: str = TWO_AGENTS, extra: dict | None = None):
    kernel = await make_kernel(plugins={"tools": clawbot_tools.plugin, **(extra or {})}, config=config)
    runtime = AgentRuntime(kernel)
    conversation = await runtime.conversation("main", chain=[ModelChoice(provider, "m")])
    return kernel, runtime, conversation


def _last_tool_result(provider: ScriptedProvider, request: int = -1) -> str:
    return provider.requests[request].messages[-1].text


async def _eventually(predicate, timeout: float = 5.0) -> None:
    async with asyncio.timeout(timeout):
        while not predicate():
            await asyncio.sleep(0.01)


# --- session tools ---------------------------------------------------------------------


async def test_session_status_tells_the_time_in_the_users_zone_and_the_usage(make_kernel) -> None:
    provider = ScriptedProvider("hello", [call("session_status", "c1")], "ok")
    _, _, conversation = await _runtime(make_kernel, provider)
    await conversation.send("agent:main:main", "hi")
    await conversation.send("agent:main:main", "what time is it?")
    status = _last_tool_result(provider)
    now = datetime.now(ZoneInfo("Asia/Tokyo"))
    assert f"{now:%Y-%m-%d}" in status and "Asia/Tokyo, UTC+09:00" in status
    assert "Model: scripted/m" in status and "1 turns" in status and "10 in / 2 out tokens" in status


async def test_agents_and_sessions_are_listed_and_another_sessions_history_is_readable(make_kernel) -> None:
    provider = ScriptedProvider(
        "noted",
        [call("agents_list", "c1"), call("sessions_list", "c2"), call("sessions_history", "c3", session_key="agent:main:work")],
        "done",
        [call("sessions_history", "c4", session_key="agent:main:nope")],
        "ok",
    )
    _, _, conversation = await _runtime(make_kernel, provider)
    await conversation.send("agent:main:work", "remember the blue folder")
    await conversation.send("agent:main:main", "look around")
    agents, sessions, history = (m.text for m in provider.requests[2].messages[-3:])
    assert "- main [default]: model auto <- you" in agents and "- helper (Helper): model auto" in agents
    assert "agent:main:work: 1 turns" in sessions
    messages = json.loads(history.split("\n", 1)[1])["messages"]
    assert [(m["role"], m["text"]) for m in messages] == [("user", "remember the blue folder"), ("assistant", "noted")]
    await conversation.send("agent:main:main", "and this?")
    missing = provider.requests[-1].messages[-1]
    assert missing.is_error and "no session 'agent:main:nope'" in missing.text


async def test_sessions_send_asks_another_agent_and_returns_its_reply(make_kernel) -> None:
    main = ScriptedProvider([call("sessions_send", "c1", session_key="agent:helper:main", message="2+2?")], "helper says 4")
    helper = ScriptedProvider("4")
    kernel, runtime, conversation = await _runtime(make_kernel, main)
    await runtime.conversation("helper", chain=[ModelChoice(helper, "h")])
    result = await conversation.send("agent:main:main", "ask the helper")
    assert result.text == "helper says 4"
    assert helper.requests[0].messages[-1].text.endswith("\n  2+2?")  # after clawbot's label saying who sent it
    assert "the reply of session agent:helper:main" in _last_tool_result(main)
    assert _last_tool_result(main).split("\n")[1] == "4"
    assert kernel.sessions.get("agent:helper:main").turns == 1


async def test_a_send_back_to_a_waiting_session_is_refused_instead_of_deadlocking(make_kernel) -> None:
    main = ScriptedProvider([call("sessions_send", "c1", session_key="agent:helper:main", message="ping")], "done")
    helper = ScriptedProvider([call("sessions_send", "c2", session_key="agent:main:main", message="pong")], "gave up")
    kernel, runtime, conversation = await _runtime(make_kernel, main)
    await runtime.conversation("helper", chain=[ModelChoice(helper, "h")])
    async with asyncio.timeout(5):
        await conversation.send("agent:main:main", "go")
    refused = helper.requests[1].messages[-1]
    assert refused.is_error and "would deadlock" in refused.text


async def test_other_agents_are_out_of_reach_unless_agent_to_agent_names_both(make_kernel) -> None:
    main = ScriptedProvider([call("sessions_send", "c1", session_key="agent:helper:main", message="hi")], "ok")
    config = TWO_AGENTS.replace('agent_to_agent = ["main", "helper"]', 'agent_to_agent = ["helper"]')
    _, _, conversation = await _runtime(make_kernel, main, config=config)
    await conversation.send("agent:main:main", "ask the helper")
    refused = main.requests[1].messages[-1]
    assert refused.is_error and "list both in tools.agent_to_agent" in refused.text


async def test_a_group_session_cannot_read_the_owners_session_or_message_strangers(make_kernel, fake_channel) -> None:
    provider = ScriptedProvider(
        "private plans",
        [call("sessions_history", "c1", session_key="agent:main:main"), call("sessions_list", "c2"), call("message", "c3", message="spam", target="stranger")],
        "ok",
    )
    _, gateway, task = await _gateway(make_kernel, fake_channel, provider)
    await fake_channel.inject("remember: surprise party", peer_id="owner")
    await fake_channel.inject("what did the owner say?", peer_id="team", chat_type="group")
    gateway.stop()
    await task
    history, listing, message = provider.requests[2].messages[-3:]
    assert history.is_error and "only the agent's main session may reach other sessions" in history.text
    assert "agent:main:main" not in listing.text and "group:team" in listing.text
    assert message.is_error and "may only message its own chat" in message.text
    assert all(m.peer_id != "stranger" for m in fake_channel.sent)


async def test_someone_let_into_the_main_session_gets_only_their_own_chat(make_kernel, fake_channel) -> None:
    """With dm_scope "main" a paired or allow-listed person writes into the owner's main
    session: its reach (other sessions, other chats) stays the owner's."""
    provider = ScriptedProvider(
        "private plans",
        [
            call("sessions_history", "c1", session_key="agent:main:fake:group:team"),
            call("sessions_list", "c2"),
            call("message", "c3", message="spam", target="stranger"),
        ],
        "ok",
    )
    _, gateway, task = await _gateway(make_kernel, fake_channel, provider)
    await fake_channel.inject("team plans: ship friday", peer_id="team", chat_type="group")
    await fake_channel.inject("what did the team say?", peer_id="paired-stranger")
    gateway.stop()
    await task
    history, listing, message = provider.requests[2].messages[-3:]
    assert history.is_error and "only the agent's main session may reach other sessions" in history.text
    assert "group:team" not in listing.text
    assert message.is_error and "may only message its own chat" in message.text
    assert all(m.peer_id != "stranger" for m in fake_channel.sent)


async def test_tools_outside_a_gateway_say_what_they_cannot_do(make_kernel) -> None:
    provider = ScriptedProvider([call("message", "c1", message="hi", channel="telegram", target="42")], "ok")
    _, _, conversation = await _runtime(make_kernel, provider)
    await conversation.send("agent:main:main", "tell bob")
    refused = provider.requests[1].messages[-1]
    assert refused.is_error and "no gateway is running" in refused.text


# --- through the gateway -----------------------------------------------------------------


async def _gateway(make_kernel, fake_channel, provider, extra: dict | None = None):
    kernel, runtime, _ = await _runtime(make_kernel, provider, extra={"fake": fake_channel.as_plugin(), **(extra or {})})
    gateway = Gateway(kernel, runtime.respond, "main", runtime=runtime)
    task = asyncio.create_task(gateway.run([fake_channel]))
    await fake_channel.wait_started()
    return runtime, gateway, task


async def test_message_sends_to_another_chat_and_a_silent_reply_is_not_sent(make_kernel, fake_channel) -> None:
    provider = ScriptedProvider(
        [call("message", "c1", message="Dinner at 8", target="bob"), call("message", "c2", message="x", channel="nope", target="1")],
        "[[silent]]",
    )
    _, gateway, task = await _gateway(make_kernel, fake_channel, provider)
    await fake_channel.inject("tell bob about dinner", peer_id="alice", from_owner=True)
    gateway.stop()
    await task
    assert [(m.peer_id, m.text) for m in fake_channel.sent] == [("bob", "Dinner at 8")]
    sent, refused = provider.requests[1].messages[-2:]
    assert "Sent to fake:bob" in sent.text
    assert refused.is_error and "channel 'nope' is not running (running: fake)" in refused.text


def _guarded_tool(decisions: list[ApprovalDecision]) -> Tool:
    """A tool that needs approval, then reports back through a system event."""

    async def handler(call: ToolCall) -> ToolResult:
        services = call.services
        assert services is not None

        async def on_decision(decision: ApprovalDecision) -> None:
            decisions.append(decision)
            if decision is ApprovalDecision.ALLOW_ONCE:
                await services.post_system_event("guarded finished: launched the rocket")

        try:
            ticket = services.request_approval(ApprovalRequest("guarded", "launch --rocket", "launching is irreversible", on_decision, allow_always=False))
        except ServiceUnavailable as exc:
            return ToolResult.error(str(exc))
        return ToolResult.text(f"Approval required. Reply with: {ticket.reply_with}", approval_id=ticket.id)

    return Tool("guarded", "needs approval", {"type": "object"}, handler)


async def test_an_approval_round_trip_runs_the_action_once_and_reports_back(make_kernel, fake_channel) -> None:
    decisions: list[ApprovalDecision] = []
    tool_plugin = plugin_from_hooks(clawbot_tools=lambda ctx: [_guarded_tool(decisions)])
    provider = ScriptedProvider([call("guarded", "c1")], "Please approve it.", "The rocket is launched.")
    runtime, gateway, task = await _gateway(make_kernel, fake_channel, provider, {"guarded": tool_plugin})
    await fake_channel.inject("launch please", peer_id="alice", from_owner=True)
    approval_id = re.search(r"/approve (\w+) allow-once", _last_tool_result(provider)).group(1)
    # the kernel shows the exact command itself before the model's own relay
    assert fake_channel.texts() == [
        f"Approval needed ({approval_id}): guarded wants to run the command below\nWhy: launching is irreversible\n"
        f"\u2502 launch --rocket\nReply /approve {approval_id} allow-once or /deny {approval_id}. Expires in 30 min.",
        "Please approve it.",
    ]

    await fake_channel.inject(f"/approve {approval_id} always", peer_id="alice", from_owner=True)
    assert "cannot be allowed always" in fake_channel.texts()[-1] and decisions == []
    await fake_channel.inject(f"/approve {approval_id}", peer_id="alice", from_owner=True)
    await _eventually(lambda: fake_channel.texts()[-1] == "The rocket is launched.")
    # the user reads the confirmation, with the exact command, before the action's report
    assert fake_channel.texts()[-2] == "Approved (once); guarded is running:\n\u2502 launch --rocket"
    assert decisions == [ApprovalDecision.ALLOW_ONCE]
    event = provider.requests[-1].messages[-1].text
    assert '"system_event": true' in event  # in the trusted block clawbot writes itself
    assert "[System event from clawbot, not written by the user]\n  guarded finished: launched the rocket" in event

    await fake_channel.inject(f"/approve {approval_id}", peer_id="alice", from_owner=True)
    assert "No pending approval" in fake_channel.texts()[-1] and decisions == [ApprovalDecision.ALLOW_ONCE]
    gateway.stop()
    await task
    await runtime.aclose()


async def test_only_the_owner_may_answer_and_a_second_answer_finds_nothing(make_kernel) -> None:
    runtime = AgentRuntime(await make_kernel())
    decided: list[ApprovalDecision] = []

    async def on_decision(decision: ApprovalDecision) -> None:
        decided.append(decision)

    broker = runtime.approvals
    ticket = broker.register("agent:main:main", ApprovalRequest("t", "rm x", "why", on_decision))
    refused, nothing = broker.answer("agent:main:main", ticket.id, ApprovalDecision.ALLOW_ONCE, by_owner=False)
    assert nothing is None and refused == broker.answer("agent:main:main", "000000", ApprovalDecision.ALLOW_ONCE, by_owner=True)[0].replace(
        "'000000'", f"'{ticket.id}'"
    )
    notice, commit = broker.answer("agent:main:main", ticket.id, ApprovalDecision.ALLOW_ONCE, by_owner=True)
    again, second = broker.answer("agent:main:main", ticket.id, ApprovalDecision.DENY, by_owner=True)
    assert notice.startswith("Approved (once)") and commit is not None
    assert "No pending approval" in again and second is None  # claimed: the race has one winner
    commit()
    await broker.drain()
    assert decided == [ApprovalDecision.ALLOW_ONCE]


def test_the_notice_makes_hidden_characters_visible() -> None:
    from datetime import UTC, datetime

    from clawbot import ApprovalTicket
    from clawbot.agent.approvals import notice_text

    async def nothing(decision):  # noqa: ANN001, ANN202
        return None

    spoof = "ls \u202e fdm.exe \x1b[2K\rrm -rf ~"
    text = notice_text(
        ApprovalTicket("ab12cd", datetime.now(UTC), "/approve ab12cd allow-once"),
        ApprovalRequest("exec", spoof, "not allowlisted", nothing, allow_always=False),
    )
    assert "\\u202e" in text and "\\u001b" in text and "\\u000d" in text and "\u202e" not in text
    assert "allow-always" not in text and "/deny ab12cd" in text


async def test_approvals_per_chat_are_capped(make_kernel) -> None:
    from clawbot.agent.approvals import MAX_PENDING_PER_SESSION

    runtime = AgentRuntime(await make_kernel())

    async def nothing(decision):  # noqa: ANN001, ANN202
        return None

    for _ in range(MAX_PENDING_PER_SESSION):
        runtime.approvals.register("agent:main:main", ApprovalRequest("t", "x", "y", nothing))
    try:
        runtime.approvals.register("agent:main:main", ApprovalRequest("t", "x", "y", nothing))
    except ServiceUnavailable as exc:
        assert "already waiting" in str(exc)
    else:
        raise AssertionError("the 21st pending approval was accepted")
    await runtime.aclose()


async def test_an_unanswered_approval_expires(make_kernel) -> None:
    kernel = await make_kernel()
    runtime = AgentRuntime(kernel)
    decided: list[ApprovalDecision] = []

    async def on_decision(decision: ApprovalDecision) -> None:
        decided.append(decision)

    ticket = runtime.approvals.register("agent:main:main", ApprovalRequest("t", "cmd", "why", on_decision, expires_in_s=0.05))
    await _eventually(lambda: decided == [ApprovalDecision.EXPIRED])
    notice, commit = runtime.approvals.answer("agent:main:main", ticket.id, ApprovalDecision.ALLOW_ONCE, by_owner=True)
    assert "No pending approval" in notice and commit is None


async def test_plugin_chat_commands_answer_without_the_agent(make_kernel, fake_channel) -> None:
    from clawbot import ChatCommand

    commands = plugin_from_hooks(
        clawbot_chat_commands=lambda ctx: [
            ChatCommand("ping", "answers pong", lambda c: f"pong {c.args}".strip()),
            ChatCommand("stop", "tries to shadow /stop", lambda c: "hijacked"),
            ChatCommand("boom", "fails", lambda c: 1 / 0),
        ]
    )
    provider = ScriptedProvider("agent answer")
    _, gateway, task = await _gateway(make_kernel, fake_channel, provider, {"cmds": commands})
    await fake_channel.inject("/ping@clawbot_bot hello", from_owner=True)
    await fake_channel.inject("/stop", from_owner=True)
    await fake_channel.inject("/boom", from_owner=True)
    await fake_channel.inject("/etc/hosts looks wrong")
    gateway.stop()
    await task
    assert fake_channel.texts() == [
        "pong hello",
        "Nothing is running.",
        "/boom failed: ZeroDivisionError: division by zero",
        "agent answer",
    ]
    assert provider.requests[0].messages[-1].text.endswith("\nunknown (not the owner): /etc/hosts looks wrong")  # no name, and not the owner


# --- skills outside the workspace ------------------------------------------------------


async def test_read_reaches_the_skill_folders_the_prompt_offers_and_nothing_beside_them(make_kernel, clawbot_home) -> None:
    import clawbot_workspace.plugin

    user_skill = clawbot_home / "skills" / "deploy"
    (user_skill / "scripts").mkdir(parents=True)
    (user_skill / "SKILL.md").write_text("---\nname: deploy\ndescription: Deploys the site.\n---\nRun scripts/go.sh\n")
    (user_skill / "scripts" / "go.sh").write_text("echo deploying\n")
    (clawbot_home / "skills" / "secret.txt").write_text("not for the model\n")
    (clawbot_home / "credentials.json").write_text("{}\n")
    provider = ScriptedProvider(
        [call("read", "c1", path="~/skills/deploy/SKILL.md"), call("read", "c2", path=str(user_skill / "scripts" / "go.sh"))],
        [call("read", "c3", path="~/skills/secret.txt"), call("read", "c4", path="~/credentials.json")],
        [call("write", "c5", path="~/skills/deploy/SKILL.md", content="hijacked")],
        "done",
    )
    _, _, conversation = await _runtime(make_kernel, provider, extra={"workspace": clawbot_workspace.plugin})
    await conversation.send("agent:main:main", "deploy please")
    assert "<location>~/skills/deploy/SKILL.md</location>" in provider.requests[0].system.text
    skill_md, script = (m.text for m in provider.requests[1].messages[-2:])
    assert "Run scripts/go.sh" in skill_md and "echo deploying" in script
    beside, credentials = provider.requests[2].messages[-2:]
    assert beside.is_error and "outside the workspace" in beside.text
    assert credentials.is_error and "outside the workspace" in credentials.text
    written = provider.requests[3].messages[-1]
    assert written.is_error and "outside the workspace" in written.text
    assert "hijacked" not in (user_skill / "SKILL.md").read_text()


async def test_a_skill_whose_skill_md_is_a_symlink_is_readable_where_the_prompt_shows_it(make_kernel, clawbot_home) -> None:
    shared = clawbot_home / "shared-docs"
    shared.mkdir()
    (shared / "deploy.md").write_text("---\nname: deploy\ndescription: Deploys.\n---\nlinked instructions\n")
    (shared / "other.md").write_text("not offered\n")
    folder = clawbot_home / "skills" / "deploy"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").symlink_to(shared / "deploy.md")
    provider = ScriptedProvider([call("read", "c1", path="~/skills/deploy/SKILL.md"), call("read", "c2", path=str(shared / "other.md"))], "done")
    _, _, conversation = await _runtime(make_kernel, provider)
    await conversation.send("agent:main:main", "deploy")
    skill_md, other = provider.requests[1].messages[-2:]
    assert "linked instructions" in skill_md.text
    assert other.is_error and "outside the skill folders" in other.text


async def test_a_workspace_skill_symlinked_outside_does_not_widen_what_read_reaches(make_kernel, clawbot_home) -> None:
    outside = clawbot_home / "private"
    outside.mkdir()
    (outside / "SKILL.md").write_text("---\nname: trap\ndescription: A planted skill.\n---\nbody\n")
    (outside / "notes.txt").write_text("private notes\n")
    provider = ScriptedProvider([call("read", "c1", path="skills/trap/notes.txt")], "done")
    kernel, _, conversation = await _runtime(make_kernel, provider)
    workspace = expand_user_path(kernel.config.agent_workspace("main"), kernel.env)
    (workspace / "skills").mkdir(parents=True, exist_ok=True)
    (workspace / "skills" / "trap").symlink_to(outside)
    assert "trap" in [s.name for s in kernel.skill_catalog.prompt_skills("main")]
    await conversation.send("agent:main:main", "read it")
    refused = provider.requests[1].messages[-1]
    assert refused.is_error and "outside the workspace" in refused.text
