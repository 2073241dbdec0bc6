"""Running the tool calls of one model reply: in call order, overlapping only where it is safe.

A reply's calls are cut into steps, in call order: consecutive calls of tools that declare
``concurrent=True`` (read-only ones) form one step and run together; every other call is a
step of its own and runs alone. A step starts when the one before it has finished, so two
edits of one file both land, and a read after a write sees what was written. The lane
already allows one turn per session at a time, so this makes a session's state-changing
calls run one at a time.

Each result is handed to ``record`` in call order as soon as its step is over, so a killed
process loses at most the step it was in. A call is never lost because another was killed:

* a call cancelled under its tool (whatever it awaited was cancelled) gets an error result
  and the others go on;
* when the turn itself is cancelled (``/stop``), the calls that finished keep their results,
  the running ones are cancelled and answered as stopped, the ones not started as not run,
  and the cancellation then goes on up.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator, Sequence

from clawbot.agent.toolrun import ToolRunContext, as_message, run_tool_call
from clawbot.types import Message, ToolCallBlock, ToolResult

#: how long a stopped turn waits for its cancelled calls to wind down before answering for them
STOP_GRACE_S = 5.0

Outcome = tuple[Message, ToolResult]


def steps(ctx: ToolRunContext, calls: Sequence[ToolCallBlock]) -> Iterator[list[ToolCallBlock]]:
    """``calls`` cut into steps: runs of concurrent-safe calls, every other call alone."""
    step: list[ToolCallBlock] = []
    for call in calls:
        tool = ctx.tools.get(call.name)
        if getattr(tool, "concurrent", False):
            step.append(call)
            continue
        if step:
            yield step
            step = []
        yield [call]  # a call that may change state (or of an unknown tool) runs alone
    if step:
        yield step


async def run_tool_calls(ctx: ToolRunContext, calls: Sequence[ToolCallBlock], record: Callable[[Message], None]) -> list[Outcome]:
    """Run ``calls`` step by step; every result goes to ``record`` in call order."""
    outcomes: list[Outcome] = []

    def keep(outcome: Outcome) -> None:
        outcomes.append(outcome)
        record(outcome[0])

    remaining = list(steps(ctx, calls))
    while remaining:
        step = remaining.pop(0)
        tasks = [asyncio.ensure_future(run_tool_call(ctx, call)) for call in step]
        try:
            await asyncio.wait(tasks)
        except asyncio.CancelledError:
            await _wind_down(tasks)
            for call, task in zip(step, tasks, strict=True):
                keep(_finished(task) or _error(call, _stopped(call)))
            for call in (c for later in remaining for c in later):
                keep(_error(call, _not_run(call)))
            raise
        for call, task in zip(step, tasks, strict=True):
            keep(_finished(task) or _error(call, _killed(call, task)))
    return outcomes


async def _wind_down(tasks: Sequence[asyncio.Future[Outcome]]) -> None:
    """Cancel the running calls and give them :data:`STOP_GRACE_S` to end. A tool that ignores
    cancellation must not hold /stop: after the grace it is answered as stopped and left to
    finish on its own. Another /stop meanwhile does not cut the grace short: the results of
    the step, finished ones included, are recorded only after it."""
    running = [task for task in tasks if not task.done()]
    for task in running:
        task.cancel()
    loop = asyncio.get_running_loop()
    deadline = loop.time() + STOP_GRACE_S
    while running and not all(task.done() for task in running) and loop.time() < deadline:
        try:
            await asyncio.wait(running, timeout=deadline - loop.time())
        except asyncio.CancelledError:
            continue  # the turn is being stopped already; the caller raises once this is over
    for task in running:
        task.add_done_callback(_consume)


def _consume(task: asyncio.Future[Outcome]) -> None:
    if not task.cancelled():
        task.exception()  # its result is no longer wanted; nothing to log


def _finished(task: asyncio.Future[Outcome]) -> Outcome | None:
    if task.done() and not task.cancelled() and task.exception() is None:
        return task.result()
    return None


def _error(call: ToolCallBlock, text: str) -> Outcome:
    result = ToolResult.error(text)
    return as_message(call, result), result


def _killed(call: ToolCallBlock, task: asyncio.Future[Outcome]) -> str:
    if task.cancelled():
        ended = f"{call.name} was cancelled before it finished"
    else:
        error = task.exception()
        ended = f"{call.name} stopped before it finished ({type(error).__name__}: {error})"
    return f"{ended}; some of its work may have been done. Check its effects before running it again."


def _stopped(call: ToolCallBlock) -> str:
    return (
        f"The turn was stopped before {call.name} finished; some of its work may have been done. "
        "Check its effects before running it again if it is still needed."
    )


def _not_run(call: ToolCallBlock) -> str:
    return f"{call.name} did not run: the turn was stopped before its turn came. Run it again if it is still needed."
