"""The agent loop: tool round trips, and every way a tool call can go wrong."""

from __future__ import annotations

import asyncio
import json

import pytest
from clawbot import Role, Tool, ToolCallDecision, ToolResult
from clawbot.agent.conversation import Conversation
from clawbot.agent.models import ModelChoice
from clawbot.testing import plugin_from_hooks

from .scripted import ScriptedProvider, call

ECHO_SCHEMA = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"], "additionalProperties": False}


def tools_plugin(order: list[str] | None = None):
    async def echo(c):
        return ToolResult.text(f"echo:{c.arguments['text']}", length=len(c.arguments["text"]))

    async def slow(c):
        await asyncio.sleep(float(c.arguments.get("seconds", 0)))
        if order is not None:
            order.append(c.call_id)
        return ToolResult.text(f"slept {c.call_id}")

    def crash(c):
        raise OSError("disk on fire")

    def big(c):
        return ToolResult.text("x" * 100_000 + "\nTraceback: the important error at the end")

    return plugin_from_hooks(
        clawbot_tools=lambda ctx: [
            Tool("echo", "Echo text.", ECHO_SCHEMA, echo),
            Tool("slow", "Sleep.", {"type": "object", "properties": {"seconds": {"type": "number"}}}, slow, concurrent=True),
            Tool("stuck", "Never returns in time.", {"type": "object"}, lambda c: asyncio.sleep(10), timeout_s=0.05),
            Tool("crash", "Raises.", {"type": "object"}, crash),
            Tool("big", "Huge output.", {"type": "object"}, big),
        ]
    )


async def _conversation(make_kernel, provider, plugins=None, config=None):
    kernel = await make_kernel(plugins={"tools": tools_plugin(), **(plugins or {})}, config=config)
    return kernel, Conversation(kernel, ModelChoice(provider, "m"), "main", services=None)


async def test_multi_step_loop_sends_exactly_the_growing_history(make_kernel) -> None:
    provider = ScriptedProvider([call("echo", "c1", text="a")], [call("echo", "c2", text="b")], "all done")
    kernel, conv = await _conversation(make_kernel, provider)
    result = await conv.send("agent:main:main", "go")
    assert result.text == "all done" and result.iterations == 3 and result.tool_calls == 2
    assert {t.name for t in provider.requests[0].tools} == {"big", "crash", "echo", "slow", "stuck"}
    roles = [[m.role for m in r.messages] for r in provider.requests]
    assert roles == [
        [Role.USER],
        [Role.USER, Role.ASSISTANT, Role.TOOL_RESULT],
        [Role.USER, Role.ASSISTANT, Role.TOOL_RESULT, Role.ASSISTANT, Role.TOOL_RESULT],
    ]
    third = provider.requests[2].messages
    assert third[2].tool_call_id == "c1" and third[2].text == "echo:a"
    assert third[4].tool_call_id == "c2" and third[4].text == "echo:b"
    saved = kernel.sessions.open("agent:main:main").transcript.load().messages()
    assert [m.role for m in saved] == [*roles[2], Role.ASSISTANT]
    assert kernel.sessions.get("agent:main:main").usage.input_tokens == 30


async def test_parallel_calls_run_concurrently_and_results_keep_call_order(make_kernel) -> None:
    order: list[str] = []
    provider = ScriptedProvider([call("slow", "first", seconds=0.2), call("slow", "second", seconds=0.0)], "ok")
    kernel = await make_kernel(plugins={"tools": tools_plugin(order)})
    conv = Conversation(kernel, ModelChoice(provider, "m"), "main", services=None)
    await conv.send("agent:main:main", "go")
    assert order == ["second", "first"]  # ran concurrently
    results = provider.requests[1].messages[2:]
    assert [m.tool_call_id for m in results] == ["first", "second"]  # reported in call order


@pytest.mark.parametrize(
    ("bad_call", "expected"),
    [
        (call("nope", "c1"), "Unknown tool 'nope'. Available tools: big, crash, echo, slow, stuck."),
        (call("echo", "c1", raw='{"text": "unterminated'), "were not valid JSON"),
        (call("echo", "c1", text=5), "text: 5 is not of type 'string'"),
        (call("echo", "c1"), "'text' is a required property"),
        (call("echo", "c1", text="a", extra=1), "Additional properties are not allowed"),
        (call("stuck", "c1"), "stuck timed out after 0.05 s"),
        (call("crash", "c1"), "crash failed: OSError: disk on fire"),
    ],
)
async def test_bad_tool_calls_become_error_results_the_model_can_fix(make_kernel, bad_call, expected) -> None:
    provider = ScriptedProvider([bad_call], "recovered")
    _, conv = await _conversation(make_kernel, provider)
    result = await conv.send("agent:main:main", "go")
    assert result.text == "recovered"
    error = provider.requests[1].messages[2]
    assert error.role == Role.TOOL_RESULT and error.is_error and error.tool_call_id == "c1"
    assert expected in error.text


async def test_long_results_are_trimmed_for_the_model_but_kept_whole_in_the_transcript(make_kernel) -> None:
    provider = ScriptedProvider([call("big", "c1")], "ok", context_window=50_000)
    kernel, conv = await _conversation(make_kernel, provider)
    await conv.send("agent:main:main", "go")
    seen = provider.requests[1].messages[2].text
    assert len(seen) < 16_500 and "characters cut from the middle" in seen
    assert seen.endswith("Traceback: the important error at the end")
    saved = kernel.sessions.open("agent:main:main").transcript.load().messages()
    assert len(saved[2].text) > 100_000


async def test_a_plugin_guard_blocks_or_rewrites_calls(make_kernel) -> None:
    def guard(event):
        if event.arguments.get("text") == "rm -rf":
            return ToolCallDecision.block("dangerous text")
        return ToolCallDecision.rewrite({"text": event.arguments["text"].upper()})

    provider = ScriptedProvider([call("echo", "c1", text="rm -rf"), call("echo", "c2", text="hi")], "ok")
    _, conv = await _conversation(make_kernel, provider, plugins={"guard": plugin_from_hooks(clawbot_before_tool_call=guard)})
    await conv.send("agent:main:main", "go")
    blocked, rewritten = provider.requests[1].messages[2:4]
    assert blocked.is_error and "blocked: dangerous text" in blocked.text
    assert rewritten.text == "echo:HI"


async def test_a_guards_rewrite_into_invalid_arguments_does_not_reach_the_tool(make_kernel) -> None:
    provider = ScriptedProvider([call("echo", "c1", text="hi")], "ok")
    guard = plugin_from_hooks(clawbot_before_tool_call=lambda event: ToolCallDecision.rewrite({"text": 42}))
    _, conv = await _conversation(make_kernel, provider, plugins={"guard": guard})
    await conv.send("agent:main:main", "go")
    result = provider.requests[1].messages[-1]
    # the echo handler would fail on len(42) with a different message: it never ran
    assert result.is_error and "rewritten by a plugin into invalid arguments" in result.text
    assert "text: 42 is not of type 'string'" in result.text


async def test_a_guard_editing_nested_arguments_in_place_changes_nothing(make_kernel) -> None:
    seen: list[object] = []

    def meddle(event):
        event.arguments["tags"].append(42)  # no rewrite returned: the edit must not leak

    async def tagged(c):
        seen.append(c.arguments["tags"])
        return ToolResult.text("ok")

    schema = {"type": "object", "properties": {"tags": {"type": "array", "items": {"type": "string"}}}, "required": ["tags"]}
    extra = plugin_from_hooks(clawbot_tools=lambda ctx: [Tool("tagged", "Tags.", schema, tagged)])
    provider = ScriptedProvider([call("tagged", "c1", tags=["a"])], "ok")
    _, conv = await _conversation(make_kernel, provider, plugins={"tagged": extra, "guard": plugin_from_hooks(clawbot_before_tool_call=meddle)})
    await conv.send("agent:main:main", "go")
    assert seen == [["a"]]


async def test_iteration_limit_stops_with_a_clear_message(make_kernel) -> None:
    provider = ScriptedProvider(*([[call("echo", f"c{i}", text="again")] for i in range(10)]))
    kernel, conv = await _conversation(make_kernel, provider, config="[agents.defaults]\nmax_iterations = 3\n")
    result = await conv.send("agent:main:main", "loop forever")
    assert result.stopped == "iteration_limit" and len(provider.requests) == 3
    assert "stopped after 3 steps" in result.text
    entries = kernel.sessions.open("agent:main:main").transcript.load().entries
    assert entries[-2].type == "custom" and entries[-2].data == {"kind": "iteration_limit", "limit": 3}
    assert entries[-1].type == "turn"  # the turn's totals, kept for a rebuilt session index


async def test_cancelling_a_turn_is_recorded_and_the_session_stays_usable(make_kernel) -> None:
    provider = ScriptedProvider([call("slow", "c1", seconds=5)], "later")
    kernel, conv = await _conversation(make_kernel, provider)
    task = asyncio.create_task(conv.send("agent:main:main", "go"))
    transcript = None
    while transcript is None or len(transcript.load().entries) < 2:  # user + the tool call: the tool is running
        await asyncio.sleep(0.01)
        info = kernel.sessions.get("agent:main:main")
        transcript = kernel.sessions.open("agent:main:main").transcript if info else None
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    loaded = kernel.sessions.open("agent:main:main").transcript.load()
    assert loaded.entries[-1].data.get("kind") == "aborted"
    repaired = loaded.messages()
    assert repaired[-1].role == Role.TOOL_RESULT and repaired[-1].is_error  # the interrupted call is answered
    provider.replies = ["fine again"]
    assert (await conv.send("agent:main:main", "hello?")).text == "fine again"
    assert json.dumps([m.role.value for m in provider.requests[-1].messages]) == json.dumps(["user", "assistant", "tool_result", "user"])


async def test_a_tool_with_a_broken_schema_gives_an_error_result_not_a_failed_turn(make_kernel) -> None:
    broken = plugin_from_hooks(
        clawbot_tools=lambda ctx: [
            Tool("typo", "Bad schema.", {"type": "object", "properties": {"x": {"type": "objekt"}}}, lambda c: ToolResult.text("never")),
            Tool("dangling", "Bad ref.", {"type": "object", "properties": {"x": {"$ref": "#/nowhere"}}}, lambda c: ToolResult.text("never")),
        ]
    )
    provider = ScriptedProvider([call("typo", "c1", x=1), call("dangling", "c2", x=1), call("echo", "c3", text="ok")], "survived")
    kernel = await make_kernel(plugins={"tools": tools_plugin(), "broken": broken})
    result = await Conversation(kernel, ModelChoice(provider, "m"), "main", services=None).send("agent:main:main", "go")
    assert result.text == "survived"
    typo, dangling, fine = provider.requests[1].messages[2:5]
    assert typo.is_error and "its JSON schema is invalid" in typo.text
    assert dangling.is_error and "dangling" in dangling.text
    assert not fine.is_error and fine.text == "echo:ok"


async def test_a_tool_whose_parameters_are_not_an_object_schema_is_refused_at_boot(make_kernel) -> None:
    odd = plugin_from_hooks(clawbot_tools=lambda ctx: [Tool("odd", "Array params.", {"type": "array"}, lambda c: ToolResult.text("x"))])
    kernel = await make_kernel(plugins={"odd": odd})
    assert "odd" not in kernel.tools
    (failure,) = kernel.plugins.failures
    assert failure.plugin == "odd" and "must be a JSON schema of type object" in failure.error
