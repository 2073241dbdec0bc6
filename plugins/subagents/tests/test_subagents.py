"""Sub-agents: sessions_spawn starts one in its own session, with the minimal prompt and at most
its parent's tools; its result is announced back to the parent as a system event.

Real kernel, tools, workspace plugin, session files and gateway; the model is the fake LLM
server (the round trip) or a provider that answers by who asks (the limits).
"""

from __future__ import annotations

import asyncio
import json

import clawbot_tools.plugin
import clawbot_workspace.plugin
import pytest
from clawbot import (
    CapabilityScope,
    LLMProvider,
    Message,
    ModelInfo,
    Role,
    ServiceUnavailable,
    StopReason,
    TextBlock,
    Tool,
    ToolCallBlock,
    ToolResult,
    TurnTrust,
    Usage,
    hookimpl,
)
from clawbot.testing import plugin_from_hooks, running_gateway
from clawbot.testing.fake_llm import Reply, ToolCallSpec
from clawbot_subagents.plugin import SubagentsPlugin

from .kit import anthropic_on, eventually, providers_plugin

OWNER = {"peer_id": "alice"}
MAIN = "agent:main:main"


def _config(workspace, extra: str = "", *, model: str = "anthropic/claude-test") -> str:
    return f'[agents.defaults]\nworkspace = "{workspace}"\nowner_ids = ["fake:alice"]\n\n[agents.defaults.model]\nprimary = "{model}"\n' + extra


def _system(request) -> str:  # noqa: ANN001
    return json.dumps(request.body.get("system"))


def _last_user(request) -> str:  # noqa: ANN001
    content = request.body["messages"][-1]["content"]
    return content if isinstance(content, str) else json.dumps(content)


class Observer:
    def __init__(self) -> None:
        self.calls: list[tuple[str, object]] = []

    @hookimpl
    def clawbot_session_start(self, event) -> None:  # noqa: ANN001
        self.calls.append(("session_start", event))

    @hookimpl
    def clawbot_session_end(self, event) -> None:  # noqa: ANN001
        self.calls.append(("session_end", event))

    @hookimpl
    def clawbot_agent_end(self, event) -> None:  # noqa: ANN001
        self.calls.append(("agent_end", event))


async def test_a_sub_agent_round_trip_through_the_gateway(make_kernel, fake_channel, fake_llm, workspace) -> None:
    for name in ("AGENTS.md", "TOOLS.md", "SOUL.md", "USER.md", "HEARTBEAT.md"):
        (workspace / name).write_text(f"contents of {name}\n")

    def brain(request):  # noqa: ANN001, ANN202 - answers by who asks
        if "## Sub-agent" in _system(request):
            return Reply(text="the answer is 42")
        last = _last_user(request)
        if "Sub-agent" in last and "finished" not in last and "done after" in last:
            return Reply(text="Your sub-agent found: 42")
        if "tool_result" in last:
            return Reply(text="On it.")
        return Reply(tool_calls=(ToolCallSpec("sessions_spawn", {"task": "compute the answer"}),))

    fake_llm.queue(*[brain] * 4)
    anthropic = anthropic_on(fake_llm)
    observer = Observer()
    plugins = {
        "llm": providers_plugin(anthropic),
        "tools": clawbot_tools.plugin,
        "workspace": clawbot_workspace.plugin,
        "subagents": SubagentsPlugin(),
        "observer": observer,
        "fake": fake_channel.as_plugin(),
    }
    kernel = await make_kernel(plugins=plugins, config=_config(workspace))
    async with running_gateway(kernel, fake_channel):
        await fake_channel.inject("find the answer in the background", **OWNER)
        await eventually(lambda: len(fake_channel.texts()) >= 2)
        await fake_channel.inject("/subagents", **OWNER)
    await kernel.aclose()

    parent_first = fake_llm.requests[0]
    (sub,) = [r for r in fake_llm.requests if "## Sub-agent" in _system(r)]
    system = _system(sub)
    assert "contents of AGENTS.md" in system and "contents of TOOLS.md" in system
    for left_out in ("contents of SOUL.md", "contents of USER.md", "contents of HEARTBEAT.md", "## Skills", "## Memory", "## Heartbeats"):
        assert left_out not in system, left_out
    assert "contents of SOUL.md" in _system(parent_first)  # the parent has the full prompt
    assert "compute the answer" in _last_user(sub)
    sub_tools = {t["name"] for t in sub.body["tools"]}
    assert sub_tools <= {t["name"] for t in parent_first.body["tools"]} and "sessions_spawn" not in sub_tools  # max_depth 1
    report = [r for r in fake_llm.requests if "done after" in _last_user(r)]
    assert report and "the answer is 42" in _last_user(report[0])
    texts = fake_channel.texts()
    assert texts[:2] == ["On it.", "Your sub-agent found: 42"]
    assert "[done]" in texts[2] and "compute the answer" in texts[2]
    key = next(e.session_key for n, e in observer.calls if n == "session_start" and ":subagent:" in e.session_key)
    assert key.startswith("agent:main:subagent:")
    ends = [(e.session_key, e.kind, e.status) for n, e in observer.calls if n == "agent_end"]
    assert (key, "subagent", "ok") in ends and (MAIN, "chat", "ok") in ends
    assert any(n == "session_end" and e.session_key == key and e.reason == "sub-agent done" for n, e in observer.calls)


# -- limits, with a provider that answers by who asks ---------------------------------------------


class Brain(LLMProvider):
    """The parent calls the tools scripted for it, once each; a sub-agent runs ``sub``."""

    name = "brain"

    def __init__(self, parent: list[list[ToolCallBlock] | str], sub: list[ToolCallBlock] | str = "sub result") -> None:
        self.parent, self.sub = list(parent), sub
        self.requests: list = []

    def model_info(self, model_id: str) -> ModelInfo:
        return ModelInfo(model_id, context_window=200_000)

    async def complete(self, request, on_text=None):  # noqa: ANN001, ANN201
        self.requests.append(request)
        is_sub = "## Sub-agent" in request.system.text
        done = request.messages[-1].role == Role.TOOL_RESULT and (is_sub or not self.parent)
        reply = "finished" if done else (self.sub if is_sub else self.parent.pop(0) if self.parent else "ok")
        if isinstance(reply, str):
            return Message(Role.ASSISTANT, (TextBlock(reply),), usage=Usage(10, 2), stop_reason=StopReason.END_TURN)
        return Message(Role.ASSISTANT, tuple(reply), usage=Usage(10, 2), stop_reason=StopReason.TOOL_USE)


def spawn(call_id: str, **arguments) -> ToolCallBlock:
    return ToolCallBlock(id=call_id, name="sessions_spawn", arguments={"task": "work", **arguments})


async def _forever(call) -> ToolResult:  # noqa: ANN001
    await asyncio.Event().wait()
    return ToolResult.text("never")


def _tools(*names: str) -> list[Tool]:
    return [Tool(n, n, {"type": "object"}, lambda c: ToolResult.text("ran"), group="fs") for n in names] + [Tool("hang", "waits", {"type": "object"}, _forever)]


def _subagents_kernel(make_kernel, workspace, brain: Brain, fake_channel, *, extra: str = "", tools: tuple[str, ...] = (), subagents=None):  # noqa: ANN001, ANN202
    """A kernel whose default agent answers with ``brain``, with the shipped tools, the
    workspace, the sub-agents plugin and ``tools`` (plus ``hang``, which never returns)."""
    plugins = {
        "brain": providers_plugin(brain),
        "tools": clawbot_tools.plugin,
        "workspace": clawbot_workspace.plugin,
        "subagents": subagents or SubagentsPlugin(),
        "extra": plugin_from_hooks(clawbot_tools=lambda ctx: _tools(*tools)),
        "fake": fake_channel.as_plugin(),
    }
    return make_kernel(plugins=plugins, config=_config(workspace, model="brain/m") + extra)


def _scope(host, session_key: str = MAIN, tools=None) -> CapabilityScope:  # noqa: ANN001
    """The scope of a tool call of the owner's turn in ``session_key`` offering ``tools``."""
    return CapabilityScope("main", session_key, None, TurnTrust.OWNER, host, frozenset(tools) if tools is not None else None)


def _parents_follow_up(brain: Brain):  # noqa: ANN202 - a ModelRequest
    """The parent's request with its tool results (sub-agents' requests may come first: they
    run beside it)."""
    return next(r for r in brain.requests if "## Sub-agent" not in r.system.text and r.messages[-1].role == Role.TOOL_RESULT)


def _results(brain: Brain) -> list[str]:
    return [b.text for r in brain.requests for m in r.messages[-1:] if m.role == Role.TOOL_RESULT for b in m.content if hasattr(b, "text")]


async def test_past_max_concurrent_a_spawn_is_refused(make_kernel, fake_channel, workspace) -> None:
    brain = Brain([[spawn("a"), spawn("b"), spawn("c")]], sub=[ToolCallBlock("h", "hang", {})])
    subagents = SubagentsPlugin()
    kernel = await _subagents_kernel(
        make_kernel, workspace, brain, fake_channel, extra="\n[agents.defaults.subagents]\nmax_concurrent = 2\n", subagents=subagents
    )
    async with running_gateway(kernel, fake_channel):
        await fake_channel.inject("go", **OWNER)
        running = subagents.registry().running()
        results = str(_parents_follow_up(brain).messages)
    await kernel.aclose()
    assert len(running) == 2
    assert results.count("Started sub-agent") == 2 and "2 sub-agents are running already" in results


async def test_a_sub_agent_that_runs_too_long_is_timed_out_and_reported(make_kernel, fake_channel, workspace) -> None:
    brain = Brain([[spawn("a", timeout_seconds=0.05)]], sub=[ToolCallBlock("h", "hang", {})])
    subagents = SubagentsPlugin()
    kernel = await _subagents_kernel(make_kernel, workspace, brain, fake_channel, subagents=subagents)
    async with running_gateway(kernel, fake_channel):
        await fake_channel.inject("go", **OWNER)
        await eventually(lambda: any("timed out after" in r.messages[-1].text for r in brain.requests))
        (event,) = [r.messages[-1].text for r in brain.requests if "timed out after" in r.messages[-1].text]
        summary = subagents.registry().of_parent(MAIN)[0]
    await kernel.aclose()
    assert summary.status == "timed out" and "timed out after" in event and "longer than its 0.05 s" in event


async def test_nested_spawning_is_refused_at_max_depth(make_kernel, fake_channel, workspace) -> None:
    brain = Brain(["ok"])
    subagents = SubagentsPlugin()
    kernel = await _subagents_kernel(make_kernel, workspace, brain, fake_channel, subagents=subagents)
    async with running_gateway(kernel, fake_channel) as gateway:
        spawning = subagents.registry().for_scope(_scope(gateway.host, "agent:main:subagent:abcd"))
        with pytest.raises(ServiceUnavailable, match="nest only 1 level"):
            await spawning.spawn("deeper")
    await kernel.aclose()


# parent's tools, the agent's policy -> what the sub-agent is offered
NARROWING = {
    "the parent's narrower set wins": ({"read", "session_status"}, "", {"read", "session_status"}),
    "the agent's policy wins": ({"read", "write", "session_status"}, '[tools]\ndeny = ["write"]\n', {"read", "session_status"}),
    "never a tool neither has": ({"read"}, '[tools]\nallow = ["write", "read"]\n', {"read"}),
}


@pytest.mark.parametrize("case", NARROWING)
async def test_a_sub_agent_never_gets_more_tools_than_its_parent(make_kernel, fake_channel, workspace, case) -> None:
    parent_tools, policy, expected = NARROWING[case]
    brain = Brain([])
    subagents = SubagentsPlugin()
    kernel = await _subagents_kernel(make_kernel, workspace, brain, fake_channel, extra="\n" + policy, subagents=subagents)
    async with running_gateway(kernel, fake_channel) as gateway:
        await subagents.registry().for_scope(_scope(gateway.host, MAIN, parent_tools)).spawn("list things")
        await eventually(lambda: subagents.registry().of_parent(MAIN)[0].status != "running")
    await kernel.aclose()
    (sub,) = [r for r in brain.requests if "## Sub-agent" in r.system.text]
    assert {t.name for t in sub.tools} == expected


async def test_subagents_lists_and_the_owner_stops_one(make_kernel, fake_channel, workspace) -> None:
    brain = Brain([[spawn("a")], "started"], sub=[ToolCallBlock("h", "hang", {})])
    subagents = SubagentsPlugin()
    kernel = await _subagents_kernel(make_kernel, workspace, brain, fake_channel, subagents=subagents)
    async with running_gateway(kernel, fake_channel):
        await fake_channel.inject("go", **OWNER)
        await fake_channel.inject("/subagents", **OWNER)
        (run,) = subagents.registry().of_parent(MAIN)
        await fake_channel.inject(f"/subagents stop {run.run_id}", peer_id="team", chat_type="group", sender_id="mallory")
        await fake_channel.inject(f"/subagents stop {run.run_id}", **OWNER)
        await eventually(lambda: subagents.registry().of_parent(MAIN)[0].status == "stopped")
        await eventually(lambda: any("stopped after" in str(r.messages[-1].text) for r in brain.requests))
    await kernel.aclose()
    texts = fake_channel.texts()
    assert f"- {run.run_id} [running] agent main" in texts[1]
    assert "Only the owner can" in texts[2]
    assert texts[3] == f"Stopping sub-agent {run.run_id}; its session reports that it stopped."


@pytest.mark.parametrize("command", ["/stop", "/new"])
async def test_stop_and_new_end_the_chats_sub_agents_without_a_report(make_kernel, fake_channel, workspace, command) -> None:
    brain = Brain([[spawn("a"), spawn("b")], "started"], sub=[ToolCallBlock("h", "hang", {})])
    subagents = SubagentsPlugin()
    kernel = await _subagents_kernel(make_kernel, workspace, brain, fake_channel, subagents=subagents)
    async with running_gateway(kernel, fake_channel):
        await fake_channel.inject("go", **OWNER)
        registry = subagents.registry()
        assert len(registry.running()) == 2
        await fake_channel.inject(command, **OWNER)
        await eventually(lambda: not registry.running())
        requests = len(brain.requests)
        await asyncio.sleep(0.2)  # a report would start a turn now
    await kernel.aclose()
    assert len(brain.requests) == requests  # nobody reported into the chat that was stopped
    assert {r.status for r in registry.of_parent(MAIN)} == {"stopped"}
    if command == "/stop":
        assert "2 sub-agent(s) stopped too." in fake_channel.texts()[-1]


async def test_only_the_owners_turn_may_pick_a_sub_agents_model(make_kernel, fake_channel, workspace) -> None:
    brain = Brain([[spawn("a", model="anthropic/claude-test")], "ok"], sub=["done"])
    subagents = SubagentsPlugin()
    kernel = await _subagents_kernel(make_kernel, workspace, brain, fake_channel, subagents=subagents)
    async with running_gateway(kernel, fake_channel):
        await fake_channel.inject("go", peer_id="bob", chat_type="direct")  # the fake lets anyone in: bob is not the owner
    await kernel.aclose()
    assert subagents.registry().running() == [] and "only the owner" in str(_parents_follow_up(brain).messages[-1])


async def test_a_sub_agent_cut_off_by_a_stop_is_announced_to_its_chat_after_the_restart(make_kernel, fake_channel, workspace) -> None:
    brain = Brain([[spawn("a")], "started"], sub=[ToolCallBlock("h", "hang", {})])
    subagents = SubagentsPlugin()
    kernel = await _subagents_kernel(make_kernel, workspace, brain, fake_channel, subagents=subagents)
    async with running_gateway(kernel, fake_channel):
        await fake_channel.inject("go", **OWNER)
        (run,) = subagents.registry().of_parent(MAIN)
    await kernel.aclose()  # clawbot stops while the sub-agent runs: nobody is left to tell now
    told = len(fake_channel.texts())
    later = Brain(["The background work was cut off by the restart; shall I start it again?"])
    kernel = await _subagents_kernel(make_kernel, workspace, later, fake_channel)
    try:
        async with running_gateway(kernel, fake_channel):
            await eventually(lambda: len(fake_channel.texts()) > told, timeout=30)
            assert fake_channel.texts()[told:] == ["The background work was cut off by the restart; shall I start it again?"]
            (asked,) = later.requests
            assert run.run_id in asked.messages[-1].text and "was interrupted" in asked.messages[-1].text
            assert fake_channel.sent[-1].peer_id == OWNER["peer_id"]
    finally:
        await kernel.aclose()
    again = Brain([])
    kernel = await _subagents_kernel(make_kernel, workspace, again, fake_channel)
    async with running_gateway(kernel, fake_channel):
        pass
    await kernel.aclose()
    assert again.requests == []  # announced once


async def test_a_model_that_cannot_run_is_refused_before_anything_starts(make_kernel, fake_channel, workspace) -> None:
    subagents = SubagentsPlugin()
    kernel = await _subagents_kernel(make_kernel, workspace, Brain([]), fake_channel, subagents=subagents)
    async with running_gateway(kernel, fake_channel) as gateway:
        with pytest.raises(ServiceUnavailable, match="model 'nowhere/none'"):
            await subagents.registry().for_scope(_scope(gateway.host)).spawn("work", model="nowhere/none")
    await kernel.aclose()
    assert subagents.registry().of_parent(MAIN) == []
