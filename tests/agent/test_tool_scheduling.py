"""The tool calls of one model reply: which overlap, which wait, and what a killed call leaves behind.

Calls run in call order; consecutive calls of tools that declare ``concurrent=True`` run
together as one batch, every other call runs alone once everything before it has finished.
Results always come back in call order, and a call that is killed never takes the results
of the calls that finished with it.
"""

from __future__ import annotations

import asyncio
import time

import attrs
from clawbot import Role, Tool, ToolResult
from clawbot.agent.conversation import Conversation
from clawbot.agent.models import ModelChoice
from clawbot.sessions.transcript import INTERRUPTED
from clawbot.testing import plugin_from_hooks

from .scripted import ScriptedProvider, call

KEY = "agent:main:main"
ANY = {"type": "object"}


@attrs.define
class Timeline:
    spans: dict[str, tuple[float, float]] = attrs.Factory(dict)

    def overlap(self, a: str, b: str) -> bool:
        (a0, a1), (b0, b1) = self.spans[a], self.spans[b]
        return a0 < b1 and b0 < a1


def timed_tools(timeline: Timeline, seconds: float = 0.2) -> list[Tool]:
    async def nap(c):
        started = time.monotonic()
        await asyncio.sleep(seconds)
        timeline.spans[c.call_id] = (started, time.monotonic())
        return ToolResult.text(f"napped {c.call_id}")

    return [
        Tool("look", "A slow read-only look.", ANY, nap, concurrent=True),
        Tool("change", "A slow change (declares nothing, so it runs alone).", ANY, nap),
    ]


async def _conversation(make_kernel, provider, tools: list[Tool]):
    kernel = await make_kernel(plugins={"tools": plugin_from_hooks(clawbot_tools=lambda ctx: tools)})
    return kernel, Conversation(kernel, ModelChoice(provider, "m"), "main", services=None)


def test_a_tool_that_says_nothing_about_concurrency_runs_alone() -> None:
    tool = Tool("third_party", "A tool written before the field existed.", ANY, lambda c: "ok")
    assert tool.concurrent is False
    assert Tool("reader", "Reads.", ANY, lambda c: "ok", concurrent=True).concurrent is True


async def test_concurrent_tools_overlap_and_serial_ones_wait_for_everything_before_them(make_kernel) -> None:
    timeline = Timeline()
    calls = [call("look", "l1"), call("look", "l2"), call("change", "c1"), call("change", "c2"), call("look", "l3")]
    provider = ScriptedProvider(calls, "done")
    kernel, conv = await _conversation(make_kernel, provider, timed_tools(timeline))
    assert kernel.tools["change"].concurrent is False  # the default of a tool that does not declare it

    await conv.send(KEY, "go")

    assert timeline.overlap("l1", "l2")  # two read-only calls in a row run together
    spans = timeline.spans
    assert spans["c1"][0] >= max(spans["l1"][1], spans["l2"][1])  # a change waits for the looks before it
    assert spans["c2"][0] >= spans["c1"][1]  # and for the change before it
    assert spans["l3"][0] >= spans["c2"][1]  # a look after a change sees it done
    results = provider.requests[1].messages[2:]
    assert [m.tool_call_id for m in results] == ["l1", "l2", "c1", "c2", "l3"]
    assert [m.text for m in results] == [f"napped {i}" for i in ("l1", "l2", "c1", "c2", "l3")]


def killable_tools(finished: list[str]) -> list[Tool]:
    async def peek(c):
        finished.append(c.call_id)
        return ToolResult.text(f"peeked {c.call_id}")

    async def killed(c):
        # What a handler sees when whatever it waits on is cancelled under it (a killed
        # subprocess, a closed connection): CancelledError from inside, not from the turn.
        waiter = asyncio.ensure_future(asyncio.sleep(10))
        asyncio.get_running_loop().call_later(0.1, waiter.cancel)
        await waiter
        return ToolResult.text("never")

    async def hang(c):
        await asyncio.sleep(10)
        return ToolResult.text("never")

    async def note(c):
        finished.append(c.call_id)
        return ToolResult.text(f"noted {c.call_id}")

    return [
        Tool("peek", "Fast and read-only.", ANY, peek, concurrent=True),
        Tool("killed", "Is killed while it runs.", ANY, killed, concurrent=True),
        Tool("hang", "Runs until stopped.", ANY, hang, concurrent=True),
        Tool("note", "Changes something.", ANY, note),
    ]


async def test_a_call_killed_under_its_tool_leaves_the_other_results_and_the_turn_goes_on(make_kernel) -> None:
    finished: list[str] = []
    provider = ScriptedProvider([call("peek", "p1"), call("killed", "k1"), call("note", "n1")], "carried on")
    kernel, conv = await _conversation(make_kernel, provider, killable_tools(finished))

    turn = await conv.send(KEY, "go")

    assert turn.text == "carried on" and turn.tool_calls == 3
    results = provider.requests[1].messages[2:]
    assert [m.tool_call_id for m in results] == ["p1", "k1", "n1"]
    assert (results[0].text, results[0].is_error) == ("peeked p1", False)
    assert results[1].is_error and "killed was cancelled before it finished" in results[1].text
    assert (results[2].text, results[2].is_error) == ("noted n1", False)
    saved = kernel.sessions.open(KEY).transcript.load().messages()
    assert [m.text for m in saved if m.role == Role.TOOL_RESULT] == [m.text for m in results]


async def test_a_stopped_turn_keeps_the_results_of_the_calls_that_finished(make_kernel) -> None:
    finished: list[str] = []
    provider = ScriptedProvider([call("peek", "p1"), call("hang", "h1"), call("note", "n1")], "next turn")
    kernel, conv = await _conversation(make_kernel, provider, killable_tools(finished))

    turn = asyncio.create_task(conv.send(KEY, "go"))
    while "p1" not in finished:
        await asyncio.sleep(0.01)
    await asyncio.sleep(0.05)
    turn.cancel()  # what /stop does
    await asyncio.gather(turn, return_exceptions=True)

    assert turn.cancelled() and finished == ["p1"]  # the serial call after the stopped one never ran
    saved = kernel.sessions.open(KEY).transcript.load().messages()
    results = [m for m in saved if m.role == Role.TOOL_RESULT]
    assert [m.tool_call_id for m in results] == ["p1", "h1", "n1"]
    assert (results[0].text, results[0].is_error) == ("peeked p1", False)
    assert results[1].is_error and "stopped before hang finished" in results[1].text
    assert results[2].is_error and "note did not run" in results[2].text
    assert all(m.text != INTERRUPTED for m in results)

    await conv.send(KEY, "what happened?")  # the next request carries exactly those results
    assert [m.text for m in provider.requests[-1].messages if m.role == Role.TOOL_RESULT] == [m.text for m in results]


async def test_a_second_stop_while_calls_wind_down_keeps_the_finished_calls_results(make_kernel) -> None:
    """/stop sent twice: the second arrives while a stopped call is still winding down."""
    finished: list[str] = []

    async def peek(c):
        finished.append(c.call_id)
        return ToolResult.text(f"peeked {c.call_id}")

    async def stubborn(c):  # a read that takes a moment to stop when cancelled
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            await asyncio.shield(asyncio.sleep(1.0))
            raise
        return ToolResult.text("late")

    tools = [Tool("peek", "p", ANY, peek, concurrent=True), Tool("slow", "s", ANY, stubborn, concurrent=True)]
    provider = ScriptedProvider([call("peek", "p1"), call("slow", "s1")], "next")
    kernel = await make_kernel(plugins={"tools": plugin_from_hooks(clawbot_tools=lambda ctx: tools)})
    conversation = Conversation(kernel, ModelChoice(provider, "m"), "main", services=None)
    turn = asyncio.create_task(conversation.send(KEY, "go"))
    while "p1" not in finished:
        await asyncio.sleep(0.01)
    await asyncio.sleep(0.05)
    turn.cancel()  # /stop
    await asyncio.sleep(0.1)
    turn.cancel()  # /stop again
    await asyncio.gather(turn, return_exceptions=True)
    assert turn.cancelled()
    saved = kernel.sessions.open(KEY).transcript.load().messages()
    results = [m for m in saved if m.role == Role.TOOL_RESULT]
    assert [m.tool_call_id for m in results] == ["p1", "s1"]
    assert results[0].text == "peeked p1" and all(m.text != INTERRUPTED for m in results), [m.text for m in results]
