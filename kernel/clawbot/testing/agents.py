"""The agents of a test kernel as a running clawbot has them: :class:`TestAgents`.

A tool that asks the owner before it acts, posts a system event when a background job ends,
or reaches other sessions needs the services a real turn gives it, and a test needs to answer
as the owner would. ``chat`` stands in for the gateway: an object with
``channel_names() -> list[str]``, ``async deliver(message, session_key, *, notice=False)``
and ``inject(origin, session_key, text)`` (a system event that would start a turn).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from clawbot.agent.approvals import MAX_DETAILS, ApprovalBroker, full_text, notice_text
from clawbot.agent.models import ModelChoice
from clawbot.agent.runtime import AgentRuntime
from clawbot.agent.services import KernelServices
from clawbot.kernel import Kernel
from clawbot.testing.gateways import TestGateway
from clawbot.testing.turns import TestConversation
from clawbot.types import ApprovalDecision, ApprovalRequest, ApprovalTicket, InboundMessage, LLMProvider, ToolServices, TurnTrust

#: how many grant lines an approval notice shows before it sends the owner to ``show``
APPROVAL_NOTICE_MAX_DETAILS = MAX_DETAILS


def approval_notice(ticket: ApprovalTicket, request: ApprovalRequest, *, full: bool = False) -> str:
    """What the owner reads about ``request``: the notice, or all of it (``full``, after ``show``)."""
    return full_text(ticket, request) if full else notice_text(ticket, request)


class TestApprovals:
    """The questions waiting for the owner, answered as ``/approve`` and ``/deny`` answer them."""

    __test__ = False  # a helper, not a test class for pytest to collect

    def __init__(self, broker: ApprovalBroker) -> None:
        self._broker = broker

    def pending(self, session_key: str) -> list[ApprovalTicket]:
        return self._broker.pending_for(session_key)

    def requests(self, session_key: str) -> list[tuple[ApprovalTicket, ApprovalRequest]]:
        """What waits in ``session_key``, with the requests (:func:`approval_notice` reads them)."""
        return self._broker.requests_for(session_key)

    def show(self, session_key: str, approval_id: str, *, by_owner: bool = True) -> str:
        """``/approve <id> show``: the request in full; from then on it may be allowed."""
        return self._broker.show(session_key, approval_id, by_owner=by_owner)

    def answer(self, session_key: str, approval_id: str, decision: ApprovalDecision, *, by_owner: bool = True) -> tuple[str, Callable[[], None] | None]:
        """Claim the request for ``decision``: (what the owner is told, ``commit`` or ``None``);
        ``commit()`` starts acting on it, :meth:`drain` waits until that is done."""
        return self._broker.answer(session_key, approval_id, decision, by_owner=by_owner)

    async def decide(self, session_key: str, approval_id: str, decision: ApprovalDecision) -> str:
        """The owner's answer, acted on to the end: what they are told."""
        notice, commit = self.answer(session_key, approval_id, decision)
        if commit is not None:
            commit()
        await self.drain()
        return notice

    async def drain(self) -> None:
        """Wait until the decisions already taken have finished acting."""
        await self._broker.drain()


class TestAgents:
    """``TestKernel.agents(chat=...)``: close it with :meth:`aclose` (its jobs are stopped)."""

    __test__ = False  # a helper, not a test class for pytest to collect

    def __init__(self, kernel: Kernel, chat: Any = None) -> None:
        self._kernel = kernel
        self._runtime = AgentRuntime(kernel, port=chat)

    @property
    def approvals(self) -> TestApprovals:
        return TestApprovals(self._runtime.approvals)

    def tool_services(
        self,
        agent_id: str = "main",
        session_key: str = "agent:main:main",
        *,
        origin: InboundMessage | None = None,
        trust: TurnTrust = TurnTrust.NON_OWNER,
    ) -> ToolServices:
        """The services a tool call of a turn in ``session_key`` gets (``ToolCall.services``);
        ``origin`` is the chat message that started the turn, ``trust`` whose word it carries."""
        return KernelServices(self._runtime.services, agent_id, session_key, origin=origin, trust=trust)

    async def conversation(self, provider: LLMProvider, *, model: str = "test-model", agent_id: str = "main") -> TestConversation:
        """Agent ``agent_id`` answers with ``provider`` from now on (also behind :meth:`gateway`)."""
        return TestConversation(await self._runtime.conversation(agent_id, chain=[ModelChoice(provider, model)]))

    def gateway(self, *, agent_id: str = "main") -> TestGateway:
        """A gateway whose turns these agents answer: approvals asked and answered in the chat."""
        return TestGateway.of_agents(self._kernel, self._runtime, agent_id)

    async def aclose(self) -> None:
        await self._runtime.aclose()
