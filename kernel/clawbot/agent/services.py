"""The kernel's side of :class:`~clawbot.types.ToolServices`, bound to one turn.

Built by the conversation for each turn (agent, session, the message that started it, the
model in use). Session-to-session sends carry the chain of sessions waiting on each other
in a context variable, so A -> B -> A is refused instead of deadlocking on A's lane.
"""

from __future__ import annotations

import asyncio
import contextvars
from datetime import datetime
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import attrs

from clawbot.agent.runtime import AgentRuntime
from clawbot.paths import expand_user_path
from clawbot.sessions.store import agent_of
from clawbot.types import (
    AgentSummary,
    ApprovalRequest,
    ApprovalTicket,
    InboundMessage,
    Message,
    OutboundMessage,
    Role,
    ServiceUnavailable,
    SessionStatus,
    SessionSummary,
    ToolServices,
    Usage,
)

#: sessions whose turn is waiting on a sessions_send, outermost first
_WAITING: contextvars.ContextVar[tuple[str, ...]] = contextvars.ContextVar("clawbot_waiting_sessions", default=())

NO_GATEWAY = "no gateway is running in this process (a one-shot `clawbot agent` run)"


def user_timezone(name: str) -> tuple[ZoneInfo | None, str]:
    """The configured zone, or the machine's local zone when unset or unknown."""
    if name:
        try:
            return ZoneInfo(name), name
        except (ZoneInfoNotFoundError, ValueError):
            pass
    local = datetime.now().astimezone().tzinfo
    return None, str(local) if local else "UTC"


@attrs.define
class KernelServices(ToolServices):
    runtime: AgentRuntime
    agent_id: str
    session_key: str
    origin: InboundMessage | None = None
    model: str = ""

    @property
    def _kernel(self):  # noqa: ANN202 - Kernel
        return self.runtime.kernel

    def status(self) -> SessionStatus:
        zone, zone_name = user_timezone(self._kernel.config.agents.defaults.timezone)
        now = datetime.now(zone) if zone is not None else datetime.now().astimezone()
        info = self._kernel.sessions.get(self.session_key)
        return SessionStatus(
            agent_id=self.agent_id,
            session_key=self.session_key,
            session_id=info.session_id if info else None,
            model=self.model or (info.model if info and info.model else ""),
            now=now,
            timezone=zone_name,
            turns=info.turns if info else 0,
            usage=info.usage if info else Usage(),
            cost_usd=info.cost_usd if info else None,
            channel=self.origin.channel if self.origin else None,
            thinking=info.thinking if info else None,
        )

    def agents(self) -> list[AgentSummary]:
        config = self._kernel.config
        default = config.default_agent_id()
        found = []
        for agent_id in config.agent_ids() or [default]:
            agent = config.agent(agent_id)
            model = agent.model.primary if agent is not None and agent.model is not None else None
            found.append(
                AgentSummary(
                    id=agent_id,
                    name=(agent.name if agent is not None else "") or agent_id,
                    default=agent_id == default,
                    workspace=str(expand_user_path(config.agent_workspace(agent_id), self._kernel.env)),
                    model=model or config.agents.defaults.model.primary or None,
                )
            )
        return found

    def sessions(self, *, limit: int = 20, agent_id: str | None = None) -> list[SessionSummary]:
        infos = self._kernel.sessions.list(agent_id)[: max(0, limit)]
        return [
            SessionSummary(i.key, agent_of(i.key), i.session_id, i.updated_at, i.model, i.turns, i.usage, i.cost_usd)
            for i in infos
        ]

    def history(self, session_key: str, *, limit: int = 20, include_tools: bool = False) -> list[Message]:
        store = self._kernel.sessions
        info = store.get(session_key)
        if info is None:
            raise KeyError(session_key)
        from clawbot.sessions.transcript import load_transcript

        try:
            messages = load_transcript(store.path_of(info, agent_of(session_key)), store.converter).messages()
        except FileNotFoundError:
            messages = []
        if not include_tools:
            messages = [m for m in messages if m.role != Role.TOOL_RESULT and (m.text or not m.tool_calls)]
        return messages[-limit:] if limit > 0 else []

    async def send_to_session(self, session_key: str, text: str, *, timeout_s: float) -> str | None:
        waiting = (*_WAITING.get(), self.session_key)
        if session_key in waiting:
            raise ServiceUnavailable(
                f"{session_key} is waiting on this very exchange ({' -> '.join(waiting)}); sending to it would deadlock"
            )
        config = self._kernel.config
        if agent_of(session_key) not in (config.agent_ids() or [config.default_agent_id()]):
            raise ServiceUnavailable(f"no agent {agent_of(session_key)!r} is configured for {session_key}")
        conversation = await self.runtime.conversation(agent_of(session_key))

        async def turn() -> str:
            _WAITING.set(waiting)
            return (await conversation.send(session_key, text, channel="agent")).text

        if timeout_s <= 0:
            self.runtime.spawn(turn(), name=f"sessions_send:{session_key}")
            return None
        return await asyncio.wait_for(turn(), timeout_s)

    def channels(self) -> list[str]:
        return self.runtime.port.channel_names() if self.runtime.port is not None else []

    async def send_message(self, message: OutboundMessage) -> None:
        port = self.runtime.port
        if port is None:
            raise ServiceUnavailable(f"cannot send on {message.channel}: {NO_GATEWAY}")
        await port.deliver(message, self.session_key)

    def request_approval(self, request: ApprovalRequest) -> ApprovalTicket:
        if self.runtime.port is None or self.origin is None:
            raise ServiceUnavailable(f"nobody can be asked for approval: {NO_GATEWAY}")
        return self.runtime.approvals.register(self.session_key, request)

    async def post_system_event(self, text: str) -> None:
        if self.runtime.port is None or self.origin is None:
            raise ServiceUnavailable(f"cannot report back to the chat: {NO_GATEWAY}")
        self.runtime.port.inject(self.origin, self.session_key, text)
