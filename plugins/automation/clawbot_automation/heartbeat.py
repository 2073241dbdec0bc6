"""Heartbeats: a periodic turn in each agent's main session, while ``clawbot run`` serves.

Every ``every_minutes`` (per agent; 0: off), starting when the gateway starts, the agent's
main session ``agent:<id>:main`` gets clawbot's heartbeat prompt as a system event (never
as the user's words), answered in the session's lane like any message, with the heartbeat
model for that turn when one is set, and reported to plugins as a ``"heartbeat"`` run
(``clawbot_agent_end``). A slot is skipped, without a model call, when it falls outside
the active hours, when HEARTBEAT.md is missing or asks for nothing
(:func:`~clawbot_automation.heartbeat_plan.checklist_empty`), or when the main session is
busy (a turn runs or waits there); the next slot comes ``every_minutes`` later as usual.

The reply is read like any other: ``HEARTBEAT_OK`` with at most ``ack_max_chars`` of other
text is never sent, not even while it streams. A longer reply goes to ``target``: ``last``,
the chat a person last wrote to the main session from (kept across restarts:
:meth:`AgentHost.last_chat <clawbot.types.AgentHost.last_chat>`), or ``none``. With no such
chat yet the turn still runs, with the owner's trust (the agent may act on its checklist with
its tools), and its reply goes nowhere: logged as a warning and shown by ``clawbot status``
(:meth:`AgentHost.report_undelivered <clawbot.types.AgentHost.report_undelivered>`). A failing
heartbeat is logged; the gateway goes on.

The service's time is a :data:`~clawbot_automation.clock.Clock` and its waiting an injected
``sleep``, so tests drive it with :meth:`HeartbeatService.tick` and a clock they move.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from datetime import datetime, timedelta
from typing import Any, Literal

import attrs
from clawbot.replykit import parse_reply
from clawbot.types import AgentHost, InboundMessage, Service, ServiceUnavailable, TurnTrust
from clawbot.types.session_keys import main_key
from clawbot.workspacefiles import FileRefused

from clawbot_automation.clock import Clock, user_zone, utc_now
from clawbot_automation.heartbeat_plan import HEARTBEAT_FILE, AgentHeartbeat, active_at, checklist_empty, heartbeat_agents, heartbeat_of, read_checklist

log = logging.getLogger(__name__)

#: the "chat" of a heartbeat that has none to answer: no channel has this name, so nothing reaches a chat
NOWHERE = "heartbeat"
#: the longest the service sleeps at once (a clock that jumped, a config with no heartbeat)
MAX_WAIT_S = 3600.0


@attrs.frozen
class Beat:
    """What one due slot of an agent came to: ``ran`` (``answered`` is done once the turn
    ended) or ``skipped`` with the reason."""

    agent_id: str
    at: datetime
    status: Literal["ran", "skipped"]
    reason: str = ""
    answered: asyncio.Future[Any] | None = attrs.field(default=None, eq=False, repr=False)


class HeartbeatService(Service):
    name = "heartbeat"

    def __init__(self, clock: Clock = utc_now, sleep: Callable[[float], Awaitable[object]] = asyncio.sleep) -> None:
        self.clock = clock
        self.sleep = sleep
        self._next: dict[str, datetime] = {}
        self._refusals_logged: set[tuple[str, str]] = set()
        self._nowhere: set[asyncio.Task[None]] = set()

    async def run(self, host: AgentHost) -> None:
        """Run the heartbeats while the gateway runs (cancelled when it stops)."""
        while True:
            await self.tick(host, self.clock())
            due = self.next_due()
            wait = MAX_WAIT_S if due is None else (due - self.clock()).total_seconds()
            await self.sleep(min(max(wait, 0.0), MAX_WAIT_S))

    def next_due(self) -> datetime | None:
        """When the next slot of any agent is due (``None``: no agent has heartbeats on)."""
        return min(self._next.values(), default=None)

    async def tick(self, host: AgentHost, now: datetime) -> list[Beat]:
        """Run (or skip) every agent's slot that is due at ``now``; each agent's next slot is
        the first of its cadence after ``now``. An agent seen for the first time is due now."""
        beats = []
        for agent_id in heartbeat_agents(host.settings):
            heartbeat = heartbeat_of(host.settings, agent_id)
            if not heartbeat.on:
                self._next.pop(agent_id, None)
                continue
            due = self._next.setdefault(agent_id, now)
            if due > now:
                continue
            every = timedelta(minutes=heartbeat.every_minutes)
            missed = (now - due) // every
            self._next[agent_id] = due + (missed + 1) * every
            try:
                beats.append(await self._beat(host, heartbeat, now))
            except Exception:  # one agent's failing heartbeat never stops the others, nor the gateway
                log.exception("the heartbeat of agent %s failed", agent_id)
        return beats

    async def _beat(self, host: AgentHost, heartbeat: AgentHeartbeat, now: datetime) -> Beat:
        agent_id = heartbeat.agent_id
        session_key = main_key(agent_id)
        if not active_at(heartbeat, now, user_zone(host.settings.timezone)):
            return self._skipped(agent_id, now, "outside the active hours")
        workspace = host.workspace(agent_id)
        try:  # in a worker thread: whatever HEARTBEAT.md is, every chat goes on meanwhile
            checklist = await asyncio.to_thread(read_checklist, workspace)
        except FileRefused as exc:
            return self._refused(agent_id, now, exc)
        if host.session_busy(session_key):
            return self._skipped(agent_id, now, "the main session is busy")
        if checklist_empty(checklist):
            return self._skipped(agent_id, now, "HEARTBEAT.md is missing or asks for nothing")
        chat = host.last_chat(session_key) if heartbeat.target == "last" else None
        log.info("heartbeat of agent %s", agent_id)
        if chat is None:
            return Beat(agent_id, now, "ran", answered=self._to_nowhere(host, heartbeat, now))
        # The turn carries the trust of the chat it answers (someone else's chat under
        # dm_scope = "main": theirs); its reply goes there, as clawbot's event, never the user's words.
        origin = attrs.evolve(chat, timestamp=now, attachments=(), mentions=())
        try:
            answered = await host.post_system_event(session_key, heartbeat.prompt, origin=origin, kind="heartbeat", model=heartbeat.model or None)
        except ServiceUnavailable as exc:  # clawbot is stopping, or the chat's channel is down
            return self._skipped(agent_id, now, str(exc))
        return Beat(agent_id, now, "ran", answered=answered)

    def _to_nowhere(self, host: AgentHost, heartbeat: AgentHeartbeat, now: datetime) -> asyncio.Future[None]:
        """The turn with no chat to answer: the owner's (their configuration and HEARTBEAT.md,
        which only the owner's turns can write, are all it runs on); a reply that is more than
        an acknowledgement had nowhere to go, and is reported so."""

        origin = InboundMessage(channel=NOWHERE, peer_id=NOWHERE, text=heartbeat.prompt, from_owner=True, system_event=True, timestamp=now)

        async def turn() -> None:
            outcome = await host.run_turn(
                heartbeat.agent_id,
                main_key(heartbeat.agent_id),
                heartbeat.prompt,
                kind="heartbeat",
                model=heartbeat.model or None,
                trust=TurnTrust.OWNER,
                origin=origin,
            )
            if parse_reply(outcome.text, heartbeat.ack_max_chars).delivered:
                host.report_undelivered(f"a heartbeat reply of agent {heartbeat.agent_id}: heartbeat.target has no chat to send it to")

        task = asyncio.get_running_loop().create_task(turn(), name=f"heartbeat:{heartbeat.agent_id}")
        self._nowhere.add(task)
        task.add_done_callback(self._done)
        return task

    def _done(self, task: asyncio.Task[None]) -> None:
        self._nowhere.discard(task)
        if not task.cancelled() and task.exception() is not None:  # nobody asked: the failure is logged, no chat bothered
            log.error("the heartbeat turn failed", exc_info=task.exception())

    def _refused(self, agent_id: str, now: datetime, exc: FileRefused) -> Beat:
        """A skipped slot for a HEARTBEAT.md that may not be read, logged as a warning once
        per agent and reason (every slot would otherwise repeat it)."""
        reason = f"{HEARTBEAT_FILE} is not read: {exc.reason}"
        if (agent_id, exc.reason) not in self._refusals_logged:
            self._refusals_logged.add((agent_id, exc.reason))
            log.warning("the heartbeat of agent %s skips %s: %s", agent_id, exc.path, exc.reason)
        return Beat(agent_id, now, "skipped", reason)

    def _skipped(self, agent_id: str, now: datetime, reason: str) -> Beat:
        log.info("heartbeat of agent %s skipped: %s", agent_id, reason)
        return Beat(agent_id, now, "skipped", reason)
