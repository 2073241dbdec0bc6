"""The kernel's :class:`~clawbot.types.AgentHost`: what plugins' services and capabilities may do.

One per :class:`~clawbot.agent.runtime.AgentRuntime`: turns run on the runtime's
conversations (the same ones the gateway answers chats with, so a session's turns still run
one at a time), and delivery goes through whatever gateway port the runtime has right now
(the running gateway's outbox; a one-shot ``clawbot agent`` run's terminal; none).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Coroutine, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import attrs

from clawbot.agent.models import ModelError, resolve_ref
from clawbot.agent.policy import agent_tools
from clawbot.agent.turn_options import TurnOptions
from clawbot.agent.user_turns import session_message
from clawbot.kernel import Kernel
from clawbot.paths import expand_user_path
from clawbot.sessions.store import agent_of
from clawbot.types import AgentHost, Channel, InboundMessage, OutboundMessage, RunKind, ServiceUnavailable, SessionEvent, Settings, TurnOutcome, TurnTrust

if TYPE_CHECKING:
    from clawbot.agent.conversation import Conversation

log = logging.getLogger(__name__)

NO_GATEWAY = "no gateway is running in this process (start `clawbot run`)"


class Port(Protocol):
    """The part of :class:`~clawbot.agent.services.GatewayPort` the host delivers through."""

    def channel_names(self) -> list[str]: ...

    async def deliver(self, message: OutboundMessage, session_key: str | None, *, notice: bool = False) -> bool: ...

    def inject(self, origin: InboundMessage, session_key: str, text: str) -> None: ...


@runtime_checkable
class RunningGateway(Protocol):
    """What only a running gateway has (a one-shot run's port has none of it): lanes, the
    chats people last wrote from, and a record of replies that had nowhere to go."""

    def turn_running(self, session_key: str) -> bool: ...

    def last_chat(self, session_key: str) -> tuple[Channel, InboundMessage] | None: ...

    def post_event(self, origin: InboundMessage, session_key: str, text: str, *, kind: RunKind, model: str | None) -> asyncio.Future[None] | None: ...

    def went_nowhere(self, what: str) -> None: ...

    def run_job(self, session_key: str, job: Callable[[], Coroutine[Any, Any, None]], *, kind: RunKind) -> asyncio.Future[None]: ...

    def why_not_run(self, answered: asyncio.Future[None]) -> str | None: ...

    @property
    def stopping(self) -> bool: ...


class Shared(Protocol):
    """What the host needs of :class:`~clawbot.agent.services.SharedServices`."""

    kernel: Kernel
    port: Any
    local_origin: InboundMessage | None
    conversation: Callable[[str], Awaitable[Conversation]]

    def expect_event(self, session_key: str) -> None: ...


async def _in_lane(gateway: RunningGateway, session_key: str, kind: RunKind, send: Callable[[], Awaitable[Any]]) -> TurnOutcome:
    """Run ``send`` as a turn in the gateway's lane of ``session_key``, like a chat message:
    after a running turn, counted in status, cancelled by ``/stop`` (then ``stopped`` is
    ``"aborted"``). A caller that gives up cancels the turn too; when clawbot stops before the
    turn finished, the caller is cancelled, as a plugin's own task is then."""
    outcome: asyncio.Future[TurnOutcome] = asyncio.get_running_loop().create_future()
    running: list[asyncio.Task[Any]] = []

    async def job() -> None:
        if outcome.done():  # the caller gave up while it waited
            return
        task = asyncio.current_task()
        if task is not None:
            running.append(task)
        try:
            result = await send()
        except asyncio.CancelledError:
            if not outcome.done():
                outcome.set_result(TurnOutcome("", "aborted"))
            raise
        except Exception as exc:
            if not outcome.done():
                outcome.set_exception(exc)
            return
        if not outcome.done():
            outcome.set_result(TurnOutcome(result.text, result.stopped))

    answered = gateway.run_job(session_key, job, kind=kind)
    try:
        await answered
    except asyncio.CancelledError:
        if not outcome.done():
            outcome.cancel()
        for task in running:
            task.cancel()
        raise
    cut_off = not outcome.done() or (not outcome.cancelled() and outcome.exception() is None and outcome.result().stopped == "aborted")
    if gateway.stopping and cut_off:
        outcome.cancel()
        raise asyncio.CancelledError
    if not outcome.done():
        outcome.cancel()
        raise ServiceUnavailable(f"the turn in {session_key} did not run: {gateway.why_not_run(answered) or 'it was dropped'}")
    return outcome.result()


def _done() -> asyncio.Future[None]:
    future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    future.set_result(None)
    return future


@attrs.define(eq=False)
class KernelHost(AgentHost):
    shared: Shared

    @property
    def _kernel(self) -> Kernel:
        return self.shared.kernel

    @property
    def _port(self) -> Port | None:
        port: Port | None = self.shared.port
        return port

    @property
    def settings(self) -> Settings:
        return self._kernel.settings

    @property
    def state_dir(self) -> Path:
        return self._kernel.paths.root

    @property
    def default_agent_id(self) -> str:
        return str(self._kernel.config.default_agent_id())

    @property
    def gateway_running(self) -> bool:
        return isinstance(self.shared.port, RunningGateway)

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
        config = self._kernel.config
        if agent_id not in (config.agent_ids() or [config.default_agent_id()]):
            raise ServiceUnavailable(f"no agent {agent_id!r} is configured")
        conversation = await self.shared.conversation(agent_id)
        if tools is not None:
            only = frozenset(tools)
            conversation = attrs.evolve(conversation, tools={name: tool for name, tool in conversation.tools.items() if name in only})
        message = session_message(text, from_session=from_session, from_agent=agent_of(from_session)) if from_session else text
        options = TurnOptions(kind=kind, model=model, trust=trust)
        port = self.shared.port
        if not isinstance(port, RunningGateway):  # a one-shot run: nothing else runs turns here
            result = await conversation.send(session_key, message, options=options, origin=origin)
            return TurnOutcome(result.text, result.stopped)
        return await _in_lane(port, session_key, kind, lambda: conversation.send(session_key, message, options=options, origin=origin))

    async def deliver(self, message: OutboundMessage, session_key: str | None = None) -> bool:
        port = self._port
        if port is None:
            raise ServiceUnavailable(f"cannot send on {message.channel}: {NO_GATEWAY}")
        return await port.deliver(message, session_key)

    def channel_names(self) -> list[str]:
        port = self._port
        return port.channel_names() if port is not None else []

    async def post_system_event(
        self,
        session_key: str,
        text: str,
        *,
        origin: InboundMessage | None = None,
        kind: RunKind = "system",
        model: str | None = None,
    ) -> asyncio.Future[None]:
        port = self.shared.port
        if port is None:
            raise ServiceUnavailable(f"cannot queue an event for {session_key}: {NO_GATEWAY}")
        if origin is None:
            chat = self.last_chat(session_key)
            origin = chat if chat is not None else self.shared.local_origin
        if origin is None:
            raise ServiceUnavailable(f"nobody wrote to {session_key} from a running chat yet: there is no chat to answer in")
        if isinstance(port, RunningGateway):
            answered = port.post_event(origin, session_key, text, kind=kind, model=model)
            if answered is None:
                raise ServiceUnavailable(f"channel {origin.channel} is not running, or clawbot is stopping")
            return answered
        port.inject(origin, session_key, text)  # a one-shot run answers it after its turn
        return _done()

    def session_busy(self, session_key: str) -> bool:
        port = self.shared.port
        return port.turn_running(session_key) if isinstance(port, RunningGateway) else False

    def last_chat(self, session_key: str) -> InboundMessage | None:
        port = self.shared.port
        chat = port.last_chat(session_key) if isinstance(port, RunningGateway) else None
        return chat[1] if chat is not None else None

    def model_problem(self, model: str, agent_id: str) -> str | None:
        try:
            resolve_ref(self._kernel, model, agent_id)
        except ModelError as exc:
            return str(exc)
        return None

    def report_undelivered(self, what: str) -> None:
        port = self.shared.port
        if isinstance(port, RunningGateway):
            port.went_nowhere(what)
        else:
            log.warning("a reply went nowhere: %s", what)

    def workspace(self, agent_id: str) -> Path:
        return expand_user_path(self._kernel.config.agent_workspace(agent_id), self._kernel.env)

    def agent_tool_names(self, agent_id: str) -> frozenset[str]:
        return frozenset(agent_tools(self._kernel, agent_id))

    async def end_session(self, session_key: str, reason: str) -> None:
        info = self._kernel.sessions.get(session_key)
        if info is not None:
            await self._kernel.plugins.notify("clawbot_session_end", event=SessionEvent(agent_of(session_key), session_key, info.session_id, reason))

    def expect_system_event(self, session_key: str) -> None:
        self.shared.expect_event(session_key)
