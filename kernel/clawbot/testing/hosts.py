"""An :class:`~clawbot.types.AgentHost` whose turns a test function answers, for driving a
plugin's service (a scheduler, a heartbeat) without a model or a running gateway.

``ResponderHost(kernel, respond)`` reads ``kernel``'s settings and folders as the real host
does (``kernel``: what ``make_kernel`` / ``build_kernel`` returned); every turn the service
starts (:meth:`run_turn`, :meth:`post_system_event`) is answered by ``respond(message,
session_key, kind=..., model=...)``, where ``message`` is the
:class:`~clawbot.types.InboundMessage` the turn answers (``system_event`` set for clawbot's own
events). Nothing is delivered anywhere: :attr:`delivered`, :attr:`undelivered`, :attr:`ended`
and :attr:`expected_events` keep what a service sent, ended and announced, and a test sets
:attr:`busy` and :attr:`chats` to stand for the gateway's lanes and the chats people last
wrote from.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path
from typing import Any

import attrs

from clawbot.types import AgentHost, InboundMessage, OutboundMessage, RunKind, Settings, TurnOutcome, TurnTrust

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
    expected_events: list[str] = attrs.field(factory=list)
    """The sessions a service said will get a system event when its work ends (:meth:`expect_system_event`)."""

    @property
    def settings(self) -> Settings:
        settings: Settings = self.kernel.settings
        return settings

    @property
    def state_dir(self) -> Path:
        kernel = getattr(self.kernel, "_kernel", self.kernel)  # the test kit's view holds the kernel itself
        return Path(kernel.paths.root)

    @property
    def default_agent_id(self) -> str:
        return self.settings.default_agent_id

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

    def expect_system_event(self, session_key: str) -> None:
        self.expected_events.append(session_key)

    def workspace(self, agent_id: str) -> Path:
        return self.settings.workspace_of(agent_id)

    def agent_tool_names(self, agent_id: str) -> frozenset[str]:
        return frozenset(tool.name for tool in self.kernel.tools)
