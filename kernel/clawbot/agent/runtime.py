"""The agents of one running clawbot: their conversations, approvals and the way out.

``clawbot run`` and ``clawbot agent`` build one :class:`AgentRuntime` per kernel. It owns a
:class:`~clawbot.agent.conversation.Conversation` per agent (created on first use, so an
agent that never speaks never picks a model), the approval broker, and, while a gateway
runs, the gateway's :class:`GatewayPort` for sending messages and queueing system events.
Tools reach all of this only through the narrow per-turn
:class:`~clawbot.agent.services.KernelServices`.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Protocol

import attrs

from clawbot.agent.approvals import ApprovalBroker
from clawbot.kernel import Kernel
from clawbot.sessions.store import agent_of
from clawbot.types import InboundMessage, OutboundMessage

if TYPE_CHECKING:
    from clawbot.agent.conversation import Conversation
    from clawbot.gateway.live import LiveTurn


class GatewayPort(Protocol):
    """What a running gateway offers the agents."""

    def channel_names(self) -> list[str]: ...

    async def deliver(self, message: OutboundMessage, session_key: str | None, *, notice: bool = False) -> None:
        """Send ``message`` on its channel; ``notice`` (set by kernel code only, never from a
        tool's message) marks it as clawbot's own text."""

    def inject(self, origin: InboundMessage, session_key: str, text: str) -> None:
        """Answer ``text`` as a system event in ``session_key``; the reply goes to ``origin``."""


@attrs.define
class AgentRuntime:
    kernel: Kernel
    approvals: ApprovalBroker = attrs.field(factory=ApprovalBroker)
    port: GatewayPort | None = None
    _conversations: dict[str, Conversation] = attrs.field(factory=dict)
    _background: set[asyncio.Task[object]] = attrs.field(factory=set)

    def adopt(self, conversation: Conversation) -> Conversation:
        """Use ``conversation`` for its agent (the CLI builds the first one itself)."""
        conversation.runtime = self
        self._conversations[conversation.agent_id] = conversation
        return conversation

    async def conversation(self, agent_id: str) -> Conversation:
        found = self._conversations.get(agent_id)
        if found is None:
            from clawbot.agent.conversation import Conversation
            from clawbot.agent.models import choose_chain

            chain = await choose_chain(self.kernel, agent_id)
            found = self.adopt(Conversation(self.kernel, chain[0], agent_id, fallbacks=chain[1:]))
        return found

    async def respond(self, message: InboundMessage, session_key: str, *, live: LiveTurn | None = None) -> str | None:
        """The gateway's responder: one turn of the session's agent; ``live`` is told its
        text and tool calls as they happen."""
        conversation = await self.conversation(agent_of(session_key))
        on_text, on_tool_calls = (live.text, live.tool_calls) if live is not None else (None, None)
        result = await conversation.send(
            session_key, message.text, channel=message.channel, origin=message, on_text=on_text, on_tool_calls=on_tool_calls
        )
        return result.text

    @property
    def background(self) -> frozenset[asyncio.Task[object]]:
        return frozenset(self._background)

    def spawn(self, coro: object, name: str) -> asyncio.Task[object]:
        """Run ``coro`` in the background, cancelled by :meth:`aclose`."""
        task = asyncio.get_running_loop().create_task(coro, name=name)  # type: ignore[arg-type]
        self._background.add(task)
        task.add_done_callback(self._background.discard)
        return task

    async def aclose(self) -> None:
        await self.approvals.aclose()
        tasks = list(self._background)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
