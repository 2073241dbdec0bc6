"""An :class:`~clawbot.types.AgentHost` whose turns a test function answers, for driving a
plugin's service (a scheduler, a heartbeat) without a model or a running gateway.

``ResponderHost(kernel, respond)`` reads ``kernel``'s configuration and folders as the real
host does; every turn the service starts (:meth:`run_turn`, :meth:`post_system_event`) is
answered by ``respond(message, session_key, kind=..., model=...)``, where ``message`` is the
:class:`~clawbot.types.InboundMessage` the turn answers (``system_event`` set for clawbot's own
events). Nothing is delivered anywhere: :attr:`delivered`, :attr:`undelivered` and
:attr:`ended` keep what a service sent and ended, and a test sets :attr:`busy` and :attr:`chats` to stand for the gateway's lanes
and the chats people last wrote from.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path
from typing import Any

import attrs

from clawbot.paths import expand_user_path
from clawbot.types import AgentHost, InboundMessage, OutboundMessage, RunKind, TurnOutcome, TurnTrust

Respond = Callable[..., Awaitable[str | None]]


@attrs.define(eq=False)
class ResponderHost(AgentHost):
    kernel: Any
    respond: Respond
    gateway_running: bool = True
    busy: set[str] = attrs.field(factory=set)
    """Sessions a turn runs in now."""
    chats: dict[str, InboundMessage] = attrs.field(factory=dict)
    """Session key -> the message a person last wrote there from a running chat."""
    delivered: list[OutboundMessage] = attrs.field(factory=list)
    undelivered: list[str] = attrs.field(factory=list)
    ended: list[tuple[str, str]] = attrs.field(factory=list)
    """The sessions a service said it is done with, and why (:meth:`end_session`)."""

    @property
    def config(self) -> Any:
        return self.kernel.config

    @property
    def state_dir(self) -> Path:
        return Path(self.kernel.paths.root)

    @property
    def default_agent_id(self) -> str:
        return str(self.kernel.config.default_agent_id())

    async def run_turn(
        self,
        agent_id: str,
        session_key: str,
        text: str,
        *,
        kind: RunKind = "system",
        model: str | None = None,
        trust: TurnTrust | None = None,
        tools: Iterable[str] | None = None,
        from_session: str | None = None,
        origin: InboundMessage | None = None,
    ) -> TurnOutcome:
        owners = trust in (None, TurnTrust.OWNER)
        message = attrs.evolve(origin, text=text) if origin is not None else InboundMessage(channel="", peer_id="", text=text, from_owner=owners)
        return TurnOutcome(await self.respond(message, session_key, kind=kind, model=model) or "")

    async def deliver(self, message: OutboundMessage, session_key: str | None = None) -> bool:
        self.delivered.append(message)
        return True

    def channel_names(self) -> list[str]:
        return sorted({message.channel for message in self.chats.values()})

    async def post_system_event(
        self, session_key: str, text: str, *, origin: InboundMessage | None = None, kind: RunKind = "system", model: str | None = None
    ) -> asyncio.Future[None]:
        origin = origin or self.chats[session_key]
        event = attrs.evolve(origin, text=text, system_event=True, message_id=None, reply_to_id=None)
        agent_id = session_key.split(":")[1]

        async def answered() -> None:
            await self.run_turn(agent_id, session_key, text, kind=kind, model=model, origin=event)

        return asyncio.ensure_future(answered())

    def session_busy(self, session_key: str) -> bool:
        return session_key in self.busy

    def last_chat(self, session_key: str) -> InboundMessage | None:
        return self.chats.get(session_key)

    def model_problem(self, model: str, agent_id: str) -> str | None:
        return None  # every model is one ``respond`` answers

    def report_undelivered(self, what: str) -> None:
        self.undelivered.append(what)

    async def end_session(self, session_key: str, reason: str) -> None:
        self.ended.append((session_key, reason))

    def workspace(self, agent_id: str) -> Path:
        return expand_user_path(self.kernel.config.agent_workspace(agent_id), self.kernel.env)

    def agent_tool_names(self, agent_id: str) -> frozenset[str]:
        return frozenset(tool.name for tool in self.kernel.tools)
