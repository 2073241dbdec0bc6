"""The agents of one running clawbot: their conversations and the services their tools share.

``clawbot run``, ``clawbot agent`` and the gateway build one :class:`AgentRuntime` per
kernel and ask it for conversations: it builds one
:class:`~clawbot.agent.conversation.Conversation` per agent on first use (so an agent that
never speaks never picks a model), handing it the runtime's
:class:`~clawbot.agent.services.SharedServices` (approval broker, background tasks and,
while a gateway runs, the gateway's :class:`GatewayPort`). Tools reach all of this only
through the narrow per-turn :class:`~clawbot.agent.services.KernelServices`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs

from clawbot.agent.approvals import ApprovalBroker
from clawbot.agent.services import GatewayPort, SharedServices
from clawbot.kernel import Kernel
from clawbot.sessions.store import agent_of
from clawbot.types import InboundMessage, RunKind

if TYPE_CHECKING:
    from clawbot.agent.conversation import Conversation
    from clawbot.agent.models import ModelChoice
    from clawbot.gateway.live import LiveTurn

__all__ = ["AgentRuntime", "GatewayPort"]


class AgentRuntime:
    def __init__(self, kernel: Kernel, *, port: GatewayPort | None = None) -> None:
        self.kernel = kernel
        self.services = SharedServices(kernel, self.conversation, port=port)
        self._conversations: dict[str, Conversation] = {}

    @property
    def approvals(self) -> ApprovalBroker:
        return self.services.approvals

    @property
    def port(self) -> GatewayPort | None:
        return self.services.port

    @port.setter
    def port(self, port: GatewayPort | None) -> None:
        self.services.port = port

    async def conversation(self, agent_id: str, *, chain: list[ModelChoice] | None = None) -> Conversation:
        """The conversation of ``agent_id``, built on first use with its configured model chain
        (``chain`` instead, when given: a caller that already chose the models).

        Raises :class:`~clawbot.agent.models.ModelError` when no model is usable."""
        found = self._conversations.get(agent_id)
        if found is None or chain is not None:
            from clawbot.agent.conversation import Conversation
            from clawbot.agent.models import choose_chain

            chain = chain or await choose_chain(self.kernel, agent_id)
            found = Conversation(self.kernel, chain[0], agent_id, fallbacks=list(chain[1:]), services=self.services)
            self._conversations[agent_id] = found
        return found

    async def respond(
        self,
        message: InboundMessage,
        session_key: str,
        *,
        live: LiveTurn | None = None,
        earlier: tuple[InboundMessage, ...] = (),
        kind: RunKind = "chat",
        model: str | None = None,
    ) -> str | None:
        """The gateway's responder: one turn of the session's agent; ``live`` is told its
        text and tool calls as they happen; ``earlier``: the chat's messages that waited
        for this turn, kept as their own messages before ``message``. The message's
        directives apply to this turn, and the chat's /verbose, /reasoning and /usage
        settings show what they show. ``kind``: what started the turn (a heartbeat: clawbot);
        ``model``: the model of this turn only (a heartbeat's cheaper one)."""
        from clawbot.gateway.turn_setup import setup_turn

        conversation = await self.conversation(agent_of(session_key))
        on_text, on_tool_calls = (live.text, live.tool_calls) if live is not None else (None, None)
        turn = setup_turn(self.kernel, self.port, message, session_key)
        if kind != "chat" or model:
            turn.options = attrs.evolve(turn.options, kind=kind, model=model or turn.options.model)
        result = await conversation.send(
            session_key,
            turn.text,
            channel=message.channel,
            origin=message,
            on_text=on_text,
            on_tool_calls=on_tool_calls,
            options=turn.options,
            earlier=earlier,
        )
        return await turn.finish(result, live)

    async def aclose(self) -> None:
        await self.services.aclose()
