"""One client's request in flight: the events its turn produces, until it is over.

Each ``POST /v1/turns`` (or ``send`` frame on ``/v1/ws``) gets a peer id of its own; the
API channel routes what the gateway hands that peer (live text, tool calls, notices,
replies) into the request's :class:`TurnStream`. The turn is over when every turn started
for it has ended, no approval it offered still waits, and each command the client allowed
has reported back (its report is answered in a follow-up turn, streamed here too).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import attrs
from clawbot.types import Activity, OutboundMessage, TextDelta, TurnFailed

#: how often the end of a turn is checked for what the gateway does not announce (an approval expiring)
POLL_S = 0.05
#: how long an allowed command may stay silent once nothing of the session runs any more
#: before the client stops waiting for its report (it expired, or clawbot dropped the report)
QUIET_GRACE_S = 10.0


@attrs.define
class TurnStream:
    peer_id: str
    session_key: str
    agent_id: str
    events: asyncio.Queue[dict[str, Any]] = attrs.field(factory=asyncio.Queue)
    turns: list[asyncio.Task[Any]] = attrs.field(factory=list)
    offered: set[str] = attrs.field(factory=set)
    follow_ups_due: int = 0
    failures: set[str] = attrs.field(factory=set)
    tool_calls: int = 0
    tool_batches: int = 0
    _last_was_tool: bool = False

    def turn_started(self, task: asyncio.Task[Any] | None) -> None:
        if task is not None and task not in self.turns:
            if self.turns:  # a command the client allowed reports back in a turn of its own
                self.follow_ups_due = max(0, self.follow_ups_due - 1)
            self.turns.append(task)

    async def activity(self, activity: Activity) -> None:
        if isinstance(activity, TurnFailed):  # an error, not a notice: `clawbot agent` exits 1
            self.failures.add(activity.text)
            self.events.put_nowait({"type": "error", "text": activity.text, "code": 1})
            return
        if isinstance(activity, TextDelta):
            self._last_was_tool = False
            self.events.put_nowait({"type": "text", "delta": activity.text})
            return
        self.tool_calls += 1
        if not self._last_was_tool:
            self.tool_batches += 1
        self._last_was_tool = True
        self.events.put_nowait({"type": "tool_call", "name": activity.name, "summary": activity.summary})

    def deliver(self, message: OutboundMessage) -> None:
        if message.notice and message.text in self.failures:
            return  # the failure went out as an error event already
        if message.notice:
            offer = message.approval
            approval = None
            if offer is not None:
                self.offered.add(offer.id)
                approval = {"id": offer.id, "choices": list(offer.choices), "summary": offer.summary}
            self.events.put_nowait({"type": "notice", "text": message.text, "approval": approval})
            return
        event: dict[str, Any] = {"type": "reply", "text": message.text}
        if message.media:
            event["media"] = list(message.media)
        self.events.put_nowait(event)

    def over(self, waiting: Callable[[], frozenset[str]]) -> bool:
        """Whether nothing more will come: ``waiting`` gives the approvals still open in the session."""
        if any(not task.done() for task in self.turns):
            return False
        if self.offered & waiting():
            return False
        return self.follow_ups_due <= 0

    async def until_over(self, waiting: Callable[[], frozenset[str]], quiet: Callable[[], bool] | None = None) -> None:
        """Wait until :meth:`over`. ``quiet`` says nothing could still report back (no turn
        and no background work of the session): a report still due after ``QUIET_GRACE_S``
        of that will never come, and the client is told so instead of waiting forever."""
        loop = asyncio.get_running_loop()
        quiet_since: float | None = None
        while not self.over(waiting):
            pending = [task for task in self.turns if not task.done()]
            if pending:
                quiet_since = None
                await asyncio.wait(pending, timeout=POLL_S * 20)
                continue
            if quiet is not None and self.follow_ups_due > 0 and not (self.offered & waiting()) and quiet():
                quiet_since = loop.time() if quiet_since is None else quiet_since
                if loop.time() - quiet_since >= QUIET_GRACE_S:
                    self.follow_ups_due = 0
                    self.events.put_nowait({"type": "notice", "text": "The allowed command did not report back.", "approval": None})
                    return
            else:
                quiet_since = None
            await asyncio.sleep(POLL_S)
