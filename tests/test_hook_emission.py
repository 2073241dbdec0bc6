"""The kernel itself calls the lifecycle and per-turn hooks, in real flows.

A message goes through the gateway to an agent turn that calls a tool, and a turn whose
history overflows is compacted; an observer plugin records every hook call. Nothing here
calls a hook by hand: ``tests/test_docs.py`` requires a test marked ``hook_emission`` for
every hook, and checks that such a test does not emit the hook itself.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import attrs
import pytest
from clawbot import (
    BootstrapFile,
    CompactionResult,
    CompactionStrategy,
    Message,
    ModelRequest,
    PromptSection,
    Role,
    StopReason,
    TextBlock,
    Tool,
    ToolCallBlock,
    ToolCallDecision,
    ToolResult,
    Usage,
    hookimpl,
)
from clawbot.agent.conversation import Conversation
from clawbot.agent.models import ModelChoice
from clawbot.gateway.runner import Gateway
from clawbot.testing import FakeChannel

from .plugins_for_tests import EchoProvider, OverflowingProvider, plugin

ECHO_SCHEMA = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}


class OneToolCall(EchoProvider):
    """Asks for ``echo`` once per turn, then answers with the tool's result."""

    def __init__(self) -> None:
        super().__init__("tooling")
        self.requests: list[ModelRequest] = []

    async def complete(self, request: ModelRequest, on_text=None) -> Message:
        self.requests.append(request)
        last = request.messages[-1]
        if last.role == Role.TOOL_RESULT:
            return Message(Role.ASSISTANT, (TextBlock(f"tool said {last.text}"),), usage=Usage(5, 2), stop_reason=StopReason.END_TURN)
        word = last.text.splitlines()[-1].rpartition(": ")[2]  # the user's text, after the metadata and the sender clawbot adds
        call = ToolCallBlock(id=f"c{len(self.requests)}", name="echo", arguments={"text": word})
        return Message(Role.ASSISTANT, (call,), usage=Usage(5, 2), stop_reason=StopReason.TOOL_USE)


class Observer:
    """Records every lifecycle hook the kernel calls, and changes what it may change."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, object]] = []

    @hookimpl
    def clawbot_gateway_start(self, event):
        self.calls.append(("gateway_start", event.channels))

    @hookimpl
    def clawbot_gateway_stop(self, event):
        self.calls.append(("gateway_stop", event.channels))

    @hookimpl
    def clawbot_message_received(self, event):
        self.calls.append(("message_received", event.message.text))

    @hookimpl
    def clawbot_session_start(self, event):
        self.calls.append(("session_start", event.session_key))

    @hookimpl
    def clawbot_before_tool_call(self, event):
        self.calls.append(("before_tool_call", dict(event.arguments)))
        return ToolCallDecision.rewrite({"text": event.arguments["text"].upper()})

    @hookimpl
    def clawbot_after_tool_call(self, event):
        self.calls.append(("after_tool_call", (dict(event.call.arguments), event.result.content[0].text)))

    @hookimpl
    def clawbot_agent_end(self, event):
        self.calls.append(("agent_end", (event.session_key, event.kind, event.status, event.usage.output_tokens)))

    @hookimpl
    def clawbot_message_sending(self, event):
        self.calls.append(("message_sending", event.message.text))
        return attrs.evolve(event.message, text=event.message.text + " [signed]")

    @hookimpl
    def clawbot_prompt_sections(self, ctx):
        self.calls.append(("prompt_sections", ctx.session_key))
        return [PromptSection("house_rules", "HOUSE RULES: be kind.")]

    @hookimpl
    def clawbot_tools(self, ctx):
        async def echo(call):
            return ToolResult.text(f"echo:{call.arguments['text']}")

        return [Tool("echo", "Echo text.", ECHO_SCHEMA, echo)]


class TeamFile:
    @hookimpl(wrapper=True)
    def clawbot_bootstrap_files(self, ctx):
        files = yield
        return [*(files or []), BootstrapFile("TEAM.md", ctx.workspace / "TEAM.md", "TEAM FILE: ship on Fridays.")]


def names(calls: list[tuple[str, object]]) -> list[str]:
    return [name for name, _ in calls]


@pytest.mark.hook_emission(
    "clawbot_gateway_start",
    "clawbot_gateway_stop",
    "clawbot_message_received",
    "clawbot_session_start",
    "clawbot_before_tool_call",
    "clawbot_after_tool_call",
    "clawbot_message_sending",
    "clawbot_prompt_sections",
    "clawbot_bootstrap_files",
    "clawbot_agent_end",
)
async def test_a_message_through_the_gateway_calls_every_lifecycle_hook_in_order(make_kernel, workspace: Path) -> None:
    observer = Observer()
    channel = FakeChannel()
    config = f'[agents.defaults]\nworkspace = "{workspace}"\n'
    import clawbot_workspace.plugin  # the default bootstrap files, and the section that shows them

    plugins = {"workspace": clawbot_workspace.plugin, "fake": channel.as_plugin(), "observer": observer, "team": TeamFile()}
    kernel = await make_kernel(plugins=plugins, config=config)
    provider = OneToolCall()
    conversation = Conversation(kernel, ModelChoice(provider, "m"), "main", services=None)

    async def respond(message, session_key):
        return (await conversation.send(session_key, message.text, origin=message)).text

    gateway = Gateway(kernel, respond, "main")
    running = asyncio.create_task(gateway.run([channel]))
    await channel.wait_started()
    await channel.inject("hi", from_owner=True)
    await channel.inject("again", from_owner=True)
    gateway.stop()
    await running

    assert names(observer.calls) == [
        "gateway_start",
        "message_received",
        "session_start",
        "prompt_sections",
        "before_tool_call",
        "after_tool_call",
        "agent_end",
        "message_sending",
        "message_received",
        "prompt_sections",
        "before_tool_call",
        "after_tool_call",
        "agent_end",
        "message_sending",
        "gateway_stop",
    ]
    calls = dict(observer.calls[:8])
    assert calls["agent_end"] == ("agent:main:main", "chat", "ok", 4)  # the turn's two model calls
    assert calls["gateway_start"] == ("fake",) and calls["message_received"] == "hi"
    assert calls["session_start"] == "agent:main:main"
    assert calls["before_tool_call"] == {"text": "hi"}
    assert calls["after_tool_call"] == ({"text": "HI"}, "echo:HI")  # the guard's rewrite is what ran
    assert channel.texts() == ["tool said echo:HI [signed]", "tool said echo:AGAIN [signed]"]
    system = provider.requests[0].system.text
    assert "HOUSE RULES: be kind." in system and "TEAM FILE: ship on Fridays." in system
    assert kernel.plugins.failures == []


class Summariser(CompactionStrategy):
    name = "summary"

    async def compact(self, request):
        return CompactionResult("we talked about cats", first_kept_index=len(request.messages) - 1, tokens_before=900, tokens_after=100)


@pytest.mark.hook_emission("clawbot_before_compaction", "clawbot_after_compaction")
async def test_an_overflowing_turn_calls_the_compaction_hooks_around_the_strategy(make_kernel) -> None:
    seen: list[tuple[str, object]] = []
    observer = plugin(
        clawbot_compaction_strategies=lambda ctx: [Summariser()],
        clawbot_before_compaction=lambda event: seen.append(("before", (event.tokens_before > 0, event.summary))),
        clawbot_after_compaction=lambda event: seen.append(("after", (event.tokens_after, event.summary))),
    )
    kernel = await make_kernel(plugins={"observer": observer})
    provider = OverflowingProvider()
    conversation = Conversation(kernel, ModelChoice(provider, "m"), "main", services=None)
    await conversation.send("agent:main:main", "cats?")
    assert seen == []  # nothing overflowed yet
    provider.overflow = 1
    result = await conversation.send("agent:main:main", "more cats")
    assert result.text == "reply 3"
    assert seen == [("before", (True, None)), ("after", (100, "we talked about cats"))]
    history = kernel.sessions.open("agent:main:main").transcript.load().messages()
    assert "we talked about cats" in history[0].text  # the summary the strategy wrote replaced the history


class _Ends:
    def __init__(self) -> None:
        self.events: list[tuple[str, str]] = []

    @hookimpl
    def clawbot_agent_end(self, event):
        self.events.append((event.kind, event.status))


class _Failing(EchoProvider):
    async def complete(self, request: ModelRequest, on_text=None) -> Message:
        raise RuntimeError("the provider broke")


class _Stalling(EchoProvider):
    async def complete(self, request: ModelRequest, on_text=None) -> Message:
        await asyncio.sleep(30)
        raise AssertionError("never answered")


@pytest.mark.hook_emission("clawbot_agent_end")
async def test_hook_agent_end_is_told_of_failed_and_stopped_turns_too(make_kernel) -> None:
    ends = _Ends()
    kernel = await make_kernel(plugins={"ends": ends})
    failing = Conversation(kernel, ModelChoice(_Failing("broken"), "m"), "main", services=None)
    with pytest.raises(RuntimeError):
        await failing.send("agent:main:one", "hi")
    stalling = Conversation(kernel, ModelChoice(_Stalling("slow"), "m"), "main", services=None)
    turn = asyncio.create_task(stalling.send("agent:main:two", "hi"))
    await asyncio.sleep(0.2)
    turn.cancel()
    with pytest.raises(asyncio.CancelledError):
        await turn
    assert ends.events == [("chat", "error"), ("chat", "aborted")]


@pytest.mark.hook_emission("clawbot_compaction_near")
async def test_hook_compaction_near_is_awaited_once_before_the_next_request_of_a_turn_nearing_compaction(make_kernel) -> None:
    # A window of 20,000 tokens, compaction at 16,000, the line before it 4,000 lower: the
    # second message (about 14,000 tokens) crosses the line, not the compaction.
    seen: list[tuple[object, ...]] = []

    async def near(event):
        reply = await event.ask([*event.messages, Message.user("note it")], "SIDE NOTE")
        seen.append((event.tokens >= event.threshold, event.owner_only, len(event.today), event.recorded_this_cycle("seen"), reply.text))
        event.record("seen", tokens=event.tokens)
        return Usage(input_tokens=7)

    observer = plugin(clawbot_compaction_strategies=lambda ctx: [Summariser()], clawbot_compaction_near=near)
    config = "[agents.defaults.compaction]\nreserve_tokens_floor = 4000\n[agents.defaults.compaction.memory_flush]\nsoft_threshold_tokens = 4000\n"
    kernel = await make_kernel(plugins={"observer": observer}, config=config)
    provider = OverflowingProvider()
    conversation = Conversation(kernel, ModelChoice(provider, "m", context_tokens=20_000), "main", services=None)
    await conversation.send("agent:main:main", "short")
    assert seen == []  # far from the line
    result = await conversation.send("agent:main:main", "long " * 11_200)
    assert seen == [(True, True, 10, False, "reply 2")]  # awaited once, before the turn's request
    assert result.text == "reply 3" and result.usage.input_tokens >= 7  # what the plugin spent counts in the turn's
    side, turn = provider.requests[1:]
    assert "SIDE NOTE" in side.system.text and "SIDE NOTE" not in turn.system.text
    assert "note it" not in str(turn.messages)  # nothing of the side exchange joined the history
    entries = kernel.sessions.open("agent:main:main").transcript.load().entries
    assert [e.data.get("kind") for e in entries if e.type == "custom"] == ["seen"]
