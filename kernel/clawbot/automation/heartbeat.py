"""Heartbeats: a periodic turn in each agent's main session, while ``clawbot run`` serves.

Every ``every_minutes`` (per agent; 0: off), starting when the gateway starts, the agent's
main session ``agent:<id>:main`` gets clawbot's heartbeat prompt as a system event (never
as the user's words), answered in the session's lane like any message, with the heartbeat
model for that turn when one is set, and reported to plugins as a ``"heartbeat"`` run
(``clawbot_agent_end``). A slot is skipped, without a model call, when it falls outside
the active hours, when HEARTBEAT.md is missing or asks for nothing
(:func:`~clawbot.automation.heartbeat_plan.checklist_empty`), or when the main session is
busy (a turn runs or waits there); the next slot comes ``every_minutes`` later as usual.

The reply is read like any other (:mod:`clawbot.gateway.reply_protocol`): ``HEARTBEAT_OK``
with at most ``ack_max_chars`` of other text is never sent, not even while it streams. A
longer reply goes to ``target``: ``last``, the chat a person last wrote to the main session
from (kept across restarts: :mod:`clawbot.gateway.last_chats`), or ``none``. With no such
chat yet the turn still runs (the agent may act on its checklist with its tools) and its
reply goes nowhere: logged as a warning and shown by ``clawbot status``. A failing
heartbeat is logged; the gateway goes on.

The service's time is a :data:`~clawbot.agent.clock.Clock` and its waiting an injected
``sleep``, so tests drive it with :meth:`HeartbeatService.tick` and a clock they move.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from datetime import datetime, timedelta
from typing import Any, Literal

import attrs

from clawbot.agent.clock import Clock, user_timezone, utc_now
from clawbot.automation.heartbeat_plan import HEARTBEAT_FILE, active_at, checklist_empty, heartbeat_agents, heartbeat_of, read_checklist
from clawbot.paths import expand_user_path
from clawbot.sessions.keys import main_key
from clawbot.types import Channel, ChannelCapabilities, InboundMessage, InboundSink, OutboundMessage
from clawbot.workspacefiles import FileRefused

log = logging.getLogger(__name__)

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
    answered: asyncio.Future[None] | None = attrs.field(default=None, eq=False, repr=False)


class Nowhere(Channel):
    """Where a heartbeat's reply goes when it has no chat to go to (``target = "none"``, or
    nobody wrote to the main session yet): nowhere, and nothing is shown live. A reply that
    arrives here is logged and shown by ``clawbot status`` (``went_nowhere``)."""

    name = "heartbeat"
    capabilities = ChannelCapabilities()

    def __init__(self, went_nowhere: Callable[[str], None], agent_id: str) -> None:
        self._went_nowhere = went_nowhere
        self._agent_id = agent_id

    async def start(self, sink: InboundSink) -> None:
        return None

    async def send(self, message: OutboundMessage) -> str | None:
        self._went_nowhere(f"a heartbeat reply of agent {self._agent_id}: heartbeat.target has no chat to send it to")
        return None


@attrs.define
class HeartbeatService:
    kernel: Any
    clock: Clock = utc_now
    sleep: Callable[[float], Awaitable[object]] = asyncio.sleep
    _next: dict[str, datetime] = attrs.field(factory=dict)
    _refusals_logged: set[tuple[str, str]] = attrs.field(factory=set)

    async def serve(self, gateway: Any) -> None:
        """Run the heartbeats while the gateway runs (cancelled when it stops)."""
        while True:
            await self.tick(gateway, self.clock())
            due = self.next_due()
            wait = MAX_WAIT_S if due is None else (due - self.clock()).total_seconds()
            await self.sleep(min(max(wait, 0.0), MAX_WAIT_S))

    def next_due(self) -> datetime | None:
        """When the next slot of any agent is due (``None``: no agent has heartbeats on)."""
        return min(self._next.values(), default=None)

    async def tick(self, gateway: Any, now: datetime) -> list[Beat]:
        """Run (or skip) every agent's slot that is due at ``now``; each agent's next slot is
        the first of its cadence after ``now``. An agent seen for the first time is due now."""
        beats = []
        for agent_id in heartbeat_agents(self.kernel.config):
            heartbeat = heartbeat_of(self.kernel.config, agent_id)
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
                beats.append(await self._beat(gateway, heartbeat, now))
            except Exception:  # one agent's failing heartbeat never stops the others, nor the gateway
                log.exception("the heartbeat of agent %s failed", agent_id)
        return beats

    async def _beat(self, gateway: Any, heartbeat: Any, now: datetime) -> Beat:
        agent_id = heartbeat.agent_id
        session_key = main_key(agent_id)
        zone = user_timezone(self.kernel.config.agents.defaults.timezone)[0]
        if not active_at(heartbeat, now, zone):
            return self._skipped(agent_id, now, "outside the active hours")
        workspace = expand_user_path(self.kernel.config.agent_workspace(agent_id), self.kernel.env)
        try:  # in a worker thread: whatever HEARTBEAT.md is, every chat goes on meanwhile
            checklist = await asyncio.to_thread(read_checklist, workspace)
        except FileRefused as exc:
            return self._refused(agent_id, now, exc)
        if gateway.stopping:
            return self._skipped(agent_id, now, "clawbot is stopping")
        if gateway.turn_running(session_key):
            return self._skipped(agent_id, now, "the main session is busy")
        if checklist_empty(checklist):
            return self._skipped(agent_id, now, "HEARTBEAT.md is missing or asks for nothing")
        chat = gateway.last_chat(session_key) if heartbeat.target == "last" else None
        # The turn carries the trust of the chat it answers (someone else's chat under
        # dm_scope = "main": theirs); with no chat, the owner's, whose configuration and
        # HEARTBEAT.md (which only the owner's turns can write) are all it runs on.
        if chat is None:
            nowhere = Nowhere(gateway.went_nowhere, agent_id)
            chat = (nowhere, InboundMessage(channel=nowhere.name, peer_id="heartbeat", text="", from_owner=True))
        channel, origin = chat
        event = attrs.evolve(origin, text=heartbeat.prompt, system_event=True, message_id=None, reply_to_id=None, timestamp=now, attachments=(), mentions=())
        log.info("heartbeat of agent %s", agent_id)
        answered = gateway.run_event(channel, event, session_key, kind="heartbeat", model=heartbeat.model or None)
        return Beat(agent_id, now, "ran", answered=answered)

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


def heartbeat_report(kernel: Any) -> list[dict[str, Any]]:
    """Each agent's heartbeat for ``clawbot status``: its cadence, and the runs and tokens
    its main session spent on heartbeats."""
    rows = []
    for agent_id in heartbeat_agents(kernel.config):
        heartbeat = heartbeat_of(kernel.config, agent_id)
        info = kernel.sessions.get(main_key(agent_id))
        usage = info.heartbeat_usage if info is not None else None
        rows.append(
            {
                "agent": agent_id,
                "every_minutes": heartbeat.every_minutes,
                "runs": info.heartbeats if info is not None else 0,
                "tokens": usage.prompt_tokens + usage.output_tokens if usage is not None else 0,
            }
        )
    return rows
