"""What a plugin's background services and capabilities may ask of the running clawbot.

A :class:`Service` is work that runs beside the channels while the gateway runs (a
scheduler, a poller, a watcher): plugins return them from ``clawbot_services``; the
gateway starts each once its channels are up, restarts one that raises (with backoff, like
a channel) and cancels them all when it stops; ``clawbot status`` shows each one's health.

A :class:`Capability` is something tools ask for by type instead of the kernel growing a
method for it: plugins return them from ``clawbot_capabilities``; a tool calls
``call.services.capability(Kind)`` and gets what the providing plugin's ``provide`` built
for this call's :class:`CapabilityScope` (agent, session, the message that started the turn,
its trust and the :class:`AgentHost`).

Both reach clawbot only through :class:`AgentHost`, which the kernel implements: run a turn
of an agent, deliver a message through the running gateway, queue a system event.
"""

from __future__ import annotations

import abc
import asyncio
from collections.abc import Callable, Iterable
from pathlib import Path

import attrs

from clawbot.types.automation import RunKind
from clawbot.types.channels import InboundMessage, OutboundMessage
from clawbot.types.settings import Settings
from clawbot.types.trust import TurnTrust


@attrs.frozen
class TurnOutcome:
    """How a turn :meth:`AgentHost.run_turn` ran ended: its reply and why it stopped early
    (``None``: it finished; ``"aborted"``: stopped with /stop; ``"iteration_limit"``)."""

    text: str
    stopped: str | None = None


class AgentHost(abc.ABC):
    """The running clawbot, as services and capabilities see it (implemented by the kernel).

    ``gateway_running`` says whether a gateway runs in this process. Without one turns still
    run, but nothing reaches a chat: a one-shot ``clawbot agent`` run prints what is
    delivered on its terminal, any other command (``clawbot cron run``) gets
    :class:`~clawbot.types.ServiceUnavailable` from :meth:`deliver`.
    """

    @property
    @abc.abstractmethod
    def state_dir(self) -> Path:
        """clawbot's state folder (``~/.clawbot``): a plugin keeps its files in a folder of its own there."""

    @property
    @abc.abstractmethod
    def default_agent_id(self) -> str:
        """The agent that answers what no binding routes elsewhere (a cron job without an agent)."""

    @property
    @abc.abstractmethod
    def settings(self) -> Settings:
        """What a plugin may read of clawbot's settings: the read-only view hooks see as ``ctx.clawbot``."""

    @property
    @abc.abstractmethod
    def gateway_running(self) -> bool: ...

    @abc.abstractmethod
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
        """Run one turn of ``agent_id`` in ``session_key`` with ``text`` as its message and
        return its reply (nothing is delivered: the caller decides where it goes, with
        :meth:`deliver`). Turns of one session run one at a time, so this waits for a running
        one. ``kind``: what started it (``clawbot_agent_end`` tells plugins); ``model``: the
        model of this turn only; ``trust``: whose word it carries (``None`` with no ``origin``:
        the owner's, as for what the owner's configuration starts, lowered as for a clawbot
        event when the session's history since the owner's latest message holds someone
        else's words, as in a group or a shared chat: a turn is never more trusted than what
        started it or what it reads); ``tools``: only these of the agent's tools (``None``: all it may use);
        ``from_session``: the message comes from that session (labelled so by clawbot, as a
        ``sessions_send``); ``origin``: the message the turn answers, where its approvals
        and events report (``origin.system_event``: ``text`` is clawbot's own event, labelled
        so, never someone's words). Raises what the turn raised (no usable model, a provider error).
        """

    @abc.abstractmethod
    async def deliver(self, message: OutboundMessage, session_key: str | None = None) -> bool:
        """Send ``message`` on its channel through the running gateway (``message_sending``
        hooks apply); ``session_key``: the session it belongs to. Whether it went out
        (``False``: a hook cancelled it). Raises :class:`~clawbot.types.ServiceUnavailable`
        when no gateway runs or the channel is not running."""

    @abc.abstractmethod
    def channel_names(self) -> list[str]:
        """The channels a message can be delivered on right now (none without a gateway)."""

    @abc.abstractmethod
    async def post_system_event(
        self,
        session_key: str,
        text: str,
        *,
        origin: InboundMessage | None = None,
        kind: RunKind = "system",
        model: str | None = None,
    ) -> asyncio.Future[None]:
        """Queue clawbot's own event ``text`` in ``session_key``: a turn answers it in the
        session's lane, and its reply goes to the chat of ``origin`` (``None``: the chat a
        person last wrote to the session from). Returns at once; the future is done once it
        was answered. Raises :class:`~clawbot.types.ServiceUnavailable` when no gateway runs
        or there is no chat to answer in (nobody wrote to the session yet)."""

    @abc.abstractmethod
    def session_busy(self, session_key: str) -> bool:
        """Whether a turn runs (or waits to) in ``session_key`` now."""

    @abc.abstractmethod
    def last_chat(self, session_key: str) -> InboundMessage | None:
        """The last message a person wrote to ``session_key`` from a chat that is running
        now (kept across restarts); ``None``: nobody did, or its channel is not running."""

    @abc.abstractmethod
    def model_problem(self, model: str, agent_id: str) -> str | None:
        """Why ``model`` (a ``provider/model`` ref or an alias) cannot run ``agent_id``'s
        turns (no such provider, an unknown alias), or ``None`` when it can."""

    @abc.abstractmethod
    def report_undelivered(self, what: str) -> None:
        """A reply that had nowhere to go (no chat to send it to): one log line, and
        ``clawbot status`` shows it among the undelivered replies."""

    @abc.abstractmethod
    def workspace(self, agent_id: str) -> Path:
        """The workspace folder of ``agent_id`` (``~`` expanded): where its files are."""

    @abc.abstractmethod
    def agent_tool_names(self, agent_id: str) -> frozenset[str]:
        """The tools ``agent_id`` may use (its policy applied)."""

    @abc.abstractmethod
    async def end_session(self, session_key: str, reason: str) -> None:
        """A session the plugin ran turns in for work of its own is over (a sub-agent's run
        ended): plugins see it end (``clawbot_session_end`` with ``reason``). A key that has
        no session ends nothing."""

    @abc.abstractmethod
    def expect_system_event(self, session_key: str) -> None:
        """Work ``session_key``'s turn started will :meth:`post_system_event` it once when
        it ends (a sub-agent's report): a one-shot ``clawbot agent`` run waits for each such
        event, and answers it, before it exits."""


@attrs.frozen
class ServiceHealth:
    """How a service is doing, in its own words: ``state`` is one word (``ok``, ``idle``,
    ``degraded``, ``failing``), ``detail`` one line (``next job at 07:00``)."""

    state: str = "ok"
    detail: str = ""


class Service(abc.ABC):
    """Work that runs beside the channels while the gateway runs.

    :meth:`run` is started once the channels are, with the :class:`AgentHost`, and runs until
    cancelled (the gateway stopping). One that raises is logged and started again after a
    backoff (reset after a long healthy run); one that returns is done. ``clawbot status``
    shows each service's supervision state and its own :meth:`health`.
    """

    name: str
    """Unique among services: a name offered by two plugins is a startup error."""

    @abc.abstractmethod
    async def run(self, host: AgentHost) -> None: ...

    def health(self) -> ServiceHealth:
        """Asked by ``clawbot status`` while the service runs; keep it cheap, never raise."""
        return ServiceHealth()


@attrs.frozen
class CapabilityScope:
    """Who asks for a capability: the tool call's agent, session, the message that started
    its turn (``None`` for CLI runs and clawbot's own turns), the turn's trust, and the host.
    ``tools``: the tool names this turn offers (``None``: what the agent's policy allows);
    ``model``: the turn's model."""

    agent_id: str
    session_key: str
    origin: InboundMessage | None
    trust: TurnTrust
    host: AgentHost
    tools: frozenset[str] | None = None
    model: str = ""


@attrs.frozen
class Capability:
    """What a plugin offers tools: ``provide`` builds a ``kind`` for one tool call's scope.

    ``kind`` is the type tools ask for (``services.capability(Reminders)``), usually an ABC or
    a class the plugin publishes; ``provide`` may refuse by raising
    :class:`~clawbot.types.ServiceUnavailable` with a sentence the model can act on (this
    session may not, this run cannot). Two plugins providing the same kind: startup error.
    """

    kind: type = attrs.field(validator=attrs.validators.instance_of(type))
    provide: Callable[[CapabilityScope], object] = attrs.field(validator=attrs.validators.is_callable())

    @property
    def name(self) -> str:
        """The kind's full dotted name: what the kernel registers and reports it by."""
        return self.name_of(self.kind)

    @staticmethod
    def name_of(kind: type) -> str:
        """The name a capability of ``kind`` is registered by (two kinds of one name in two
        modules are two kinds)."""
        return f"{kind.__module__}.{kind.__qualname__}"
