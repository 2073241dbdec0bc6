"""A real gateway in a plugin's tests: channels started and supervised, messages routed,
replies delivered; :class:`TestGateway`."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from clawbot.agent.runtime import AgentRuntime
from clawbot.gateway.runner import Gateway
from clawbot.kernel import Kernel
from clawbot.types import Channel, GatewayControl, InboundMessage, OutboundMessage

#: ``await respond(message, session_key)``: the reply to send (``None``: none)
Responder = Callable[[InboundMessage, str], Awaitable[str | None]]


class TestGateway:
    """The gateway of a test kernel (``TestKernel.gateway``, ``TestAgents.gateway``).

    ``await gateway.run([channel])`` runs until :meth:`stop` or until every channel ended
    (a terminal at the end of its input); run it in a task to talk to it meanwhile.
    """

    __test__ = False  # a helper, not a test class for pytest to collect

    def __init__(self, gateway: Gateway) -> None:
        self._gateway = gateway

    @classmethod
    def plain(cls, kernel: Kernel, respond: Responder, agent_id: str) -> TestGateway:
        return cls(Gateway(kernel, respond, agent_id))

    @classmethod
    def of_agents(cls, kernel: Kernel, runtime: AgentRuntime, agent_id: str) -> TestGateway:
        return cls(Gateway(kernel, runtime.respond, agent_id, runtime=runtime))

    async def run(self, channels: list[Channel] | None = None) -> None:
        """Run ``channels`` (``None``: every channel the kernel has enabled) until stopped."""
        await self._gateway.run(channels)

    def stop(self) -> None:
        """Stop taking messages, let running turns finish, then stop the channels."""
        self._gateway.stop()

    async def deliver(self, message: OutboundMessage, session_key: str | None = None, *, notice: bool = False) -> bool:
        """Send ``message`` as a reply goes out: through the ``message_sending`` hooks to its
        channel (which must be running); ``notice``: as clawbot's own text (an approval question).
        Whether it went out (``False``: a hook cancelled it)."""
        return await self._gateway.deliver(message, session_key, notice=notice)

    def channel_names(self) -> list[str]:
        """The channels running now (empty until the gateway has started them)."""
        return self._gateway.channel_names()

    @property
    def control(self) -> GatewayControl:
        """This gateway as the control surface a channel serving its owner gets as
        ``sink.control`` (:class:`~clawbot.types.GatewayControl`): sessions, turns, approvals
        waiting, the plugins' web routes (``clawbot_web_routes``, collected on each call)."""
        return self._gateway.control()

    def report_undelivered(self, what: str) -> None:
        """Record a reply that had nowhere to go, as a service does through
        ``AgentHost.report_undelivered``: one log line, and ``clawbot status`` (the control
        API's health report, ``undelivered``) lists it."""
        self._gateway.went_nowhere(what)
