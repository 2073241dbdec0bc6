"""One turn at a time per session, a few at a time in all, and what waits meanwhile.

Every message the gateway answers goes into its session's lane. A lane runs one turn at a
time; across lanes at most ``gateway.max_concurrent`` turns run at once (a lane waits for a
free slot only while it has something to run, so a busy chat never holds up another chat's
start). Messages that arrive while their session's turn runs wait in the lane
(``gateway.queue``):

* ``collect`` (the default): once the turn is over and the chat has been quiet for
  ``debounce_ms``, everything that waited is answered as one turn (a person who sends three
  short lines gets one answer, not three).
* ``followup``: each waiting message is answered as its own turn, in order.

At most ``cap`` messages wait per session: past that the oldest is dropped and its sender
told. A turn answers messages of one chat only (a session shared by several chats, such as
the owner's main session, never answers one chat's message in another), and clawbot's own
system events are never merged with what people wrote.

A plugin's turn (``AgentHost.run_turn`` while the gateway runs, :meth:`Lanes.submit_job`)
goes into its session's lane too, on its own: it waits for a running turn and ``/stop``
cancels it like any other.

``/stop`` (:meth:`Lanes.stop`) cancels the running turn and drops what waits;
:meth:`Lanes.close` stops taking messages, lets running turns finish within a grace period
and cancels the rest (a cancelled turn is recorded as interrupted by the conversation).
"""

from __future__ import annotations

import asyncio
import collections
import logging
import weakref
from collections.abc import Callable, Coroutine
from typing import Any, Literal

import attrs

from clawbot.types import Channel, InboundMessage, RunKind

log = logging.getLogger(__name__)

# why a message got no answer (Lanes.why_unanswered), as one line for whoever waits on it
DROPPED = "dropped unanswered: more than gateway.queue.cap messages waited in its session"
STOPPED = "stopped by /stop before it was answered"
STOPPING = "clawbot was stopping and did not answer it"
CUT_OFF = "clawbot stopped before its turn finished (gateway.shutdown_grace_s ran out)"


@attrs.frozen(eq=False)
class Waiting:
    """A message waiting for its turn; ``answered`` is done once a turn has answered it (or
    it was dropped or stopped): what a channel is handed back for it."""

    channel: Channel | None
    """The channel it came in on (``None``: a plugin's turn, :meth:`Lanes.submit_job`)."""
    message: InboundMessage
    answered: asyncio.Future[None]
    kind: RunKind = "chat"
    """What asks for the turn: a chat message (or clawbot's event), or a heartbeat ..."""
    model: str | None = None
    """The model of this turn only (a heartbeat's own model), ``None``: the session's."""
    kept: str | None = None
    """Its key in the gateway's durable inbox (:mod:`clawbot.gateway.inbox`), if it is kept there."""
    job: Callable[[], Coroutine[Any, Any, None]] | None = None
    """A plugin's turn (``AgentHost.run_turn``): run as it is, never merged with another."""

    def chat(self) -> tuple[object, ...]:
        """What one turn's messages must share: the chat they came from, who wrote them in
        the sense of people versus clawbot's own events, and what kind of run it is."""
        m = self.message
        if self.job is not None:
            return (self,)
        return (self.channel.name if self.channel else None, m.account_id, m.peer_id, m.thread_id, m.system_event, self.kind)


RunTurn = Callable[[str, tuple[Waiting, ...]], Coroutine[Any, Any, None]]
"""(session key, the messages one turn answers: the last one is the turn's origin)."""


@attrs.define(eq=False)
class _Lane:
    waiting: collections.deque[Waiting] = attrs.field(factory=collections.deque)
    arrived: asyncio.Event = attrs.field(factory=asyncio.Event)
    worker: asyncio.Task[None] | None = None
    turn: asyncio.Task[None] | None = None
    batch: tuple[Waiting, ...] = ()  # what the running turn answers


def _done(waiting: Waiting) -> None:
    if not waiting.answered.done():
        waiting.answered.set_result(None)


@attrs.define(eq=False)
class Lanes:
    run_turn: RunTurn
    on_dropped: Callable[[Waiting], None]
    """Told about each message dropped because too many waited (to tell its sender)."""
    on_unanswered: Callable[[Waiting], None] | None = None
    """Told about each message clawbot stopped without answering: it arrived while clawbot
    was stopping, waited, or its turn was cancelled at the end of the grace."""
    max_concurrent: int = 4
    mode: Literal["collect", "followup"] = "collect"
    debounce_s: float = 1.0
    cap: int = 20
    _lanes: dict[str, _Lane] = attrs.field(factory=dict)
    _why: weakref.WeakKeyDictionary[asyncio.Future[None], str] = attrs.field(factory=weakref.WeakKeyDictionary)
    _slots: asyncio.Semaphore = attrs.field(init=False)
    _closed: bool = False

    def __attrs_post_init__(self) -> None:
        self._slots = asyncio.Semaphore(max(1, self.max_concurrent))

    def submit(
        self, session_key: str, channel: Channel, message: InboundMessage, *, kind: RunKind = "chat", model: str | None = None, kept: str | None = None
    ) -> asyncio.Future[None]:
        """Queue ``message`` in its session's lane; the future is done once it was answered.
        ``kept``: its key in the durable inbox."""
        answered: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        return self._queue(session_key, Waiting(channel, message, answered, kind, model, kept))

    def _queue(self, session_key: str, waiting: Waiting) -> asyncio.Future[None]:
        answered = waiting.answered
        if self._closed:  # shutting down: nothing new starts
            log.info("message for %s not answered: clawbot is stopping", session_key)
            answered.set_result(None)
            self._why[answered] = STOPPING
            self._unanswered(waiting)
            return answered
        lane = self._lanes.get(session_key)
        if lane is None:
            lane = self._lanes[session_key] = _Lane()
        lane.waiting.append(waiting)
        lane.arrived.set()
        while len(lane.waiting) > self.cap:
            dropped = lane.waiting.popleft()
            self._why.setdefault(dropped.answered, DROPPED)
            _done(dropped)
            self.on_dropped(dropped)
        if lane.worker is None:
            lane.worker = asyncio.create_task(self._work(session_key, lane), name=f"lane:{session_key}")
        return answered

    def submit_job(self, session_key: str, job: Callable[[], Coroutine[Any, Any, None]], *, kind: RunKind) -> asyncio.Future[None]:
        """Queue a plugin's turn (``job``) in the session's lane like a message: it waits for
        a running turn, counts as busy, and ``/stop`` cancels it. The future is done once it
        ran (or was stopped or dropped: :meth:`why_unanswered` says which)."""
        placeholder = InboundMessage(channel="clawbot", peer_id=session_key, text="", system_event=True)
        return self._queue(session_key, Waiting(None, placeholder, asyncio.get_running_loop().create_future(), kind, job=job))

    def why_unanswered(self, answered: asyncio.Future[None]) -> str | None:
        """Why the message ``answered`` belongs to got no answer (``None``: it got one, or
        is still waiting for it): it was dropped, stopped, or clawbot stopped first."""
        return self._why.get(answered)

    def busy(self, session_key: str) -> bool:
        """Whether a turn runs, or waits to run, in ``session_key``."""
        return session_key in self._lanes

    def sessions(self) -> list[str]:
        """The sessions with a turn running or waiting."""
        return list(self._lanes)

    def running(self) -> int:
        """How many turns run right now (across all sessions)."""
        return sum(1 for lane in self._lanes.values() if lane.turn is not None and not lane.turn.done())

    async def stop(self, session_key: str) -> tuple[int, int]:
        """``/stop``: cancel the session's running turn and drop what waits: (stopped, dropped)."""
        lane = self._lanes.get(session_key)
        if lane is None:
            return 0, 0
        dropped = self._drop_waiting(lane, STOPPED)
        turn = lane.turn
        if turn is None or turn.done():
            return 0, dropped
        turn.cancel()
        await asyncio.wait([turn])
        return 1, dropped

    async def close(self, grace_s: float) -> None:
        """Take no more messages; let running turns finish within ``grace_s``, then cancel them."""
        self._closed = True
        lanes = list(self._lanes.values())
        for lane in lanes:
            if lane.waiting:
                log.info("%d waiting message(s) not answered: clawbot is stopping", len(lane.waiting))
            for waiting in lane.waiting:
                self._unanswered(waiting)
            self._drop_waiting(lane, STOPPING)
        workers = [lane.worker for lane in lanes if lane.worker is not None]
        if not workers:
            return
        _, late = await asyncio.wait(workers, timeout=grace_s)
        if late:
            log.info("%d turn(s) still running after %.1f s: cancelling them", len(late), grace_s)
        for lane in lanes:
            if lane.turn is not None and not lane.turn.done():
                lane.turn.cancel()
                for waiting in lane.batch:
                    self._why.setdefault(waiting.answered, CUT_OFF)
                    self._unanswered(waiting)
        for worker in late:
            worker.cancel()
        await asyncio.gather(*workers, return_exceptions=True)

    def _unanswered(self, waiting: Waiting) -> None:
        if self.on_unanswered is not None:
            try:
                self.on_unanswered(waiting)
            except Exception:
                log.exception("telling a sender clawbot stopped failed")

    def _drop_waiting(self, lane: _Lane, why: str) -> int:
        dropped = len(lane.waiting)
        for waiting in lane.waiting:
            self._why.setdefault(waiting.answered, why)
            _done(waiting)
        lane.waiting.clear()
        lane.arrived.set()  # a lane waiting for quiet looks again, and finds nothing
        return dropped

    async def _work(self, session_key: str, lane: _Lane) -> None:
        """The lane's turns, one after another, until nothing waits."""
        first = True
        try:
            while lane.waiting and not self._closed:
                if not first and self.mode == "collect":
                    await self._quiet(lane)
                first = False
                async with self._slots:
                    batch = self._take(lane)
                    if not batch:
                        continue
                    lane.batch = batch
                    job = batch[0].job
                    lane.turn = asyncio.create_task(job() if job is not None else self.run_turn(session_key, batch), name=f"turn:{session_key}")
                    try:
                        await asyncio.wait([lane.turn])
                    finally:
                        for waiting in batch:
                            if lane.turn.cancelled():
                                self._why.setdefault(waiting.answered, STOPPED)
                            _done(waiting)
                        if lane.turn.done() and not lane.turn.cancelled() and lane.turn.exception() is not None:
                            log.error("a turn in %s failed", session_key, exc_info=lane.turn.exception())
                        lane.turn, lane.batch = None, ()
        finally:
            lane.worker = None
            if self._lanes.get(session_key) is lane and (not lane.waiting or self._closed):
                self._drop_waiting(lane, STOPPING)
                del self._lanes[session_key]

    async def _quiet(self, lane: _Lane) -> None:
        """Wait until no message arrived for ``debounce_s`` (at most five times that in all,
        so a chat that never pauses is still answered)."""
        if self.debounce_s <= 0:
            return
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 5 * self.debounce_s
        while lane.waiting and not self._closed:
            lane.arrived.clear()
            left = deadline - loop.time()
            if left <= 0:
                return
            try:
                await asyncio.wait_for(lane.arrived.wait(), min(self.debounce_s, left))
            except TimeoutError:
                return

    def _take(self, lane: _Lane) -> tuple[Waiting, ...]:
        """What the next turn answers: the first waiting message, and in collect mode every
        message right after it from the same chat."""
        if not lane.waiting:
            return ()
        batch = [lane.waiting.popleft()]
        if self.mode == "collect":
            while lane.waiting and lane.waiting[0].chat() == batch[0].chat():
                batch.append(lane.waiting.popleft())
        return tuple(batch)
