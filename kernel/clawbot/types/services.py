"""What a tool may ask of the running clawbot: a narrow facade, never the kernel itself.

A :class:`ToolCall` carries ``services`` (``None`` only when a tool runs outside an agent
turn, e.g. in a unit test). Each instance is bound to the turn's agent, session and the
message that started it, so a tool cannot act for another session by accident. What a run
cannot do (no gateway is running to deliver a message or receive ``/approve``) raises
:class:`ServiceUnavailable` with a sentence the tool can hand to the model.
"""

from __future__ import annotations

import abc
import enum
from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import TypeVar

import attrs

from clawbot.types.channels import InboundMessage, OutboundMessage
from clawbot.types.messages import Message, Usage
from clawbot.types.providers import MemoryExcerpt, MemorySearch

T = TypeVar("T")


class ServiceUnavailable(Exception):
    """This run cannot do what was asked; ``str(exc)`` says why, for the model."""


class ApprovalRefused(ServiceUnavailable):
    """Nobody in this turn may approve: the message that started it is not from an owner.

    :meth:`ToolServices.request_approval` raises it instead of leaving a request pending
    that only an owner could answer; the tool reports "refused" and runs nothing.
    """


class ApprovalDecision(enum.Enum):
    ALLOW_ONCE = "allow-once"
    ALLOW_ALWAYS = "allow-always"
    DENY = "deny"
    EXPIRED = "expired"


ApprovalCallback = Callable[[ApprovalDecision], Awaitable[None]]


@attrs.frozen
class ApprovalRequest:
    """A tool asks the user to allow one action.

    ``command`` is shown verbatim (the user approves exactly what will run). Once the user
    decides (``/approve <id> ...`` or ``/deny <id>`` in the same chat) or the request
    expires, ``on_decision`` runs in the background; an approved action reports back with
    :meth:`ToolServices.post_system_event`. ``allow_always`` offers the remembered choice,
    which the tool itself stores (it knows what "always" covers).

    ``details`` are further lines the notice shows the user as they are (control
    characters made visible): what an approval grants (network, outside the sandbox,
    interactive input), the environment the model adds. ``always_covers`` says what
    "allow always" would remember (``/usr/bin/jq with any arguments``, ``this exact
    command``), so the user knows the scope before choosing it.
    """

    tool_name: str
    command: str
    reason: str
    on_decision: ApprovalCallback = attrs.field(repr=False)
    allow_always: bool = True
    expires_in_s: float = 1800.0
    details: tuple[str, ...] = ()
    always_covers: str | None = None


@attrs.frozen
class ApprovalTicket:
    """A pending approval: ``reply_with`` is the exact command the user must send."""

    id: str
    expires_at: datetime
    reply_with: str


@attrs.frozen
class AgentSummary:
    id: str
    name: str
    default: bool
    workspace: str
    model: str | None
    may_spawn: bool = False
    """Whether the asking session may start work as this agent (a sub-agent): its own agent
    always, another only from the main session, with both in ``tools.agent_to_agent``."""


@attrs.frozen
class SessionSummary:
    key: str
    agent_id: str
    session_id: str
    updated_at: str
    model: str | None
    turns: int
    usage: Usage
    cost_usd: float | None


@attrs.frozen
class SessionStatus:
    """How the model learns the date and time (in the user's zone), its model and usage."""

    agent_id: str
    session_key: str
    session_id: str | None
    model: str
    now: datetime
    timezone: str
    turns: int
    usage: Usage
    cost_usd: float | None
    channel: str | None
    thinking: str | None = None


class ToolServices(abc.ABC):
    """Implemented by the kernel; tools only call it."""

    agent_id: str
    session_key: str
    origin: InboundMessage | None
    """The message that started this turn (``None`` for CLI runs and system events)."""

    @abc.abstractmethod
    def status(self) -> SessionStatus: ...

    def capability(self, kind: type[T]) -> T:
        """What a plugin provides as ``kind`` (``clawbot_capabilities``), built for this call:
        this turn's agent, session, origin and trust. Raises :class:`ServiceUnavailable`
        when no installed plugin provides ``kind``, or the provider refuses this call."""
        raise ServiceUnavailable(f"no installed plugin provides {kind.__name__}")

    def readable_roots(self) -> tuple[str, ...]:
        """Real paths outside the workspace that file tools may *read* (never write): the
        folders of the skills this agent's prompt offers and their ``SKILL.md`` files, so the
        model can read what the prompt points it to even with workspace confinement on."""
        return ()

    async def memory_search(self, query: str, *, max_results: int | None = None, min_score: float | None = None) -> MemorySearch:
        """Search this agent's long-term memory (the active memory provider); raises
        :class:`ServiceUnavailable` when none is installed."""
        raise ServiceUnavailable("no memory provider is installed")

    async def memory_get(self, path: str, *, from_line: int = 1, lines: int | None = None) -> MemoryExcerpt:
        """Lines of one of this agent's memory files; raises :class:`MemoryPathError` for a
        path that is not memory, :class:`ServiceUnavailable` when no provider is installed."""
        raise ServiceUnavailable("no memory provider is installed")

    @abc.abstractmethod
    def agents(self) -> list[AgentSummary]: ...

    @abc.abstractmethod
    def sessions(self, *, limit: int = 20, agent_id: str | None = None) -> list[SessionSummary]:
        """Most recently active first."""

    @abc.abstractmethod
    def history(self, session_key: str, *, limit: int = 20, include_tools: bool = False) -> list[Message]:
        """The last ``limit`` messages of a session; raises ``KeyError`` for an unknown key."""

    @abc.abstractmethod
    async def send_to_session(self, session_key: str, text: str, *, timeout_s: float) -> str | None:
        """Run a turn in another session; its reply, or ``None`` when ``timeout_s`` is 0
        (fire and forget). Raises ``TimeoutError`` when the reply takes longer."""

    @abc.abstractmethod
    def channels(self) -> list[str]:
        """Names of the channels a message can be sent on right now."""

    @abc.abstractmethod
    async def send_message(self, message: OutboundMessage) -> None:
        """Deliver through a running channel (``message_sending`` hooks apply)."""

    @abc.abstractmethod
    def request_approval(self, request: ApprovalRequest) -> ApprovalTicket:
        """Register a pending approval in this chat; returns at once."""

    @abc.abstractmethod
    async def post_system_event(self, text: str) -> None:
        """Queue an event for this session (e.g. "exec ab12 finished"): it runs a turn in
        which the model tells the user; the reply goes where the turn's message came from."""
