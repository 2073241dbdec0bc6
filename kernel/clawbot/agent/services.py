"""The kernel's side of :class:`~clawbot.types.ToolServices`, bound to one turn.

:class:`SharedServices` is what the tools of every turn share while clawbot runs (the
approval broker, the running gateway's :class:`GatewayPort`, background tasks, the way to a
session of another agent); a conversation is given it when it is built, and builds a
:class:`KernelServices` from it for each turn (agent, session, the message that started it,
the model in use). Session-to-session sends carry the chain of sessions waiting on each
other in a context variable, so A -> B -> A is refused instead of deadlocking on A's lane.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import os
from collections.abc import Awaitable, Callable, Coroutine, Iterable
from datetime import datetime
from typing import TYPE_CHECKING, Protocol, TypeVar

import attrs

from clawbot.agent.approvals import ApprovalBroker
from clawbot.agent.clock import user_timezone
from clawbot.agent.host import KernelHost
from clawbot.agent.subagents import Subagents
from clawbot.kernel import Kernel
from clawbot.paths import expand_user_path
from clawbot.sessions.keys import session_kind
from clawbot.sessions.store import agent_of
from clawbot.types import (
    AgentSummary,
    ApprovalRequest,
    ApprovalTicket,
    Capability,
    CapabilityScope,
    InboundMessage,
    MemoryExcerpt,
    MemoryProvider,
    MemorySearch,
    Message,
    OutboundMessage,
    Role,
    ServiceUnavailable,
    SessionStatus,
    SessionSummary,
    SubagentSummary,
    ToolServices,
    TurnTrust,
    Usage,
)

if TYPE_CHECKING:
    from clawbot.agent.conversation import Conversation

#: sessions whose turn is waiting on a sessions_send, outermost first
_WAITING: contextvars.ContextVar[tuple[str, ...]] = contextvars.ContextVar("clawbot_waiting_sessions", default=())
MAX_SEND_DEPTH = 3  # A -> B -> C -> D at most: deeper chains are runaway delegation
MAX_BACKGROUND_SENDS = 8

NO_GATEWAY = "no gateway is running in this process (a one-shot `clawbot agent` run)"


log = logging.getLogger(__name__)

T = TypeVar("T")


class GatewayPort(Protocol):
    """What a running gateway offers the agents."""

    def channel_names(self) -> list[str]: ...

    async def deliver(self, message: OutboundMessage, session_key: str | None, *, notice: bool = False) -> bool:
        """Send ``message`` on its channel; ``notice`` (set by kernel code only, never from a
        tool's message) marks it as clawbot's own text. Whether it went out (``False``: a
        ``message_sending`` hook cancelled it)."""

    def inject(self, origin: InboundMessage, session_key: str, text: str) -> None:
        """Answer ``text`` as a system event in ``session_key``; the reply goes to ``origin``."""


@attrs.define(eq=False)
class SharedServices:
    """What the tools of every turn share while clawbot runs (one per :class:`AgentRuntime`)."""

    kernel: Kernel
    #: agent id -> its conversation, where a sessions_send to that agent's sessions runs
    conversation: Callable[[str], Awaitable[Conversation]]
    approvals: ApprovalBroker = attrs.field(factory=ApprovalBroker)
    port: GatewayPort | None = None  # set by a gateway while it runs
    #: the person at the terminal of a one-shot `clawbot agent` run: approvals and system
    #: events of turns that came from no channel message report to them
    local_origin: InboundMessage | None = None
    _background: set[asyncio.Task[object]] = attrs.field(factory=set)
    subagents: Subagents = attrs.field(default=attrs.Factory(lambda self: Subagents(self), takes_self=True))
    host: KernelHost = attrs.field(default=attrs.Factory(lambda self: KernelHost(self), takes_self=True))
    """What plugins' services and capabilities may do (:class:`~clawbot.types.AgentHost`)."""

    def for_turn(
        self,
        agent_id: str,
        session_key: str,
        origin: InboundMessage | None,
        model: str,
        tools: Iterable[str] | None = None,
        *,
        trust: TurnTrust,
    ) -> KernelServices:
        """``tools``: the names this turn's model was offered (a sub-agent it starts gets no
        more); ``trust``: whose word the turn carries (what it starts gets no more either)."""
        return KernelServices(self, agent_id, session_key, origin, model, frozenset(tools) if tools is not None else None, trust)

    @property
    def background(self) -> frozenset[asyncio.Task[object]]:
        return frozenset(self._background)

    async def tell_chat(self, origin: InboundMessage | None, session_key: str, text: str) -> None:
        """Send clawbot's notice ``text`` to the chat ``origin`` came from; a turn from no chat
        (a CLI run prints ``TurnResult.notices`` itself) or a gateway not running: nothing.
        Never raises: a notice that cannot be sent must not fail the turn it reports on."""
        if self.port is None or origin is None:
            return
        try:
            await self.port.deliver(origin.answer(text), session_key, notice=True)
        except Exception:
            log.exception("sending clawbot's notice to %s failed", session_key)

    def spawn(self, coro: Coroutine[object, object, object], name: str) -> asyncio.Task[object]:
        """Run ``coro`` in the background, cancelled by :meth:`aclose`."""
        task = asyncio.get_running_loop().create_task(coro, name=name)
        self._background.add(task)
        task.add_done_callback(self._background.discard)
        return task

    async def aclose(self) -> None:
        await self.approvals.aclose()
        tasks = list(self._background)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


@attrs.define
class KernelServices(ToolServices):
    shared: SharedServices
    agent_id: str
    session_key: str
    origin: InboundMessage | None = None
    model: str = ""
    tools: frozenset[str] | None = None
    """The tools this turn offers (``None``: what the agent's policy allows)."""
    trust: TurnTrust = TurnTrust.NON_OWNER
    """Whose word the turn carries (:func:`~clawbot.agent.owners.turn_trust`)."""

    @property
    def _kernel(self) -> Kernel:
        return self.shared.kernel

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

    def capability(self, kind: type[T]) -> T:
        capability = self._kernel.capabilities.get(Capability.name_of(kind))
        if capability is None:
            raise ServiceUnavailable(f"no installed plugin provides {kind.__name__}, so this cannot be done here; do it another way or tell the user")
        scope = CapabilityScope(self.agent_id, self.session_key, self.origin, self.trust, self.shared.host, self.tools, self.model)
        provided: T = capability.provide(scope)  # type: ignore[assignment]  # checked against kind just below
        if isinstance(kind, type) and not getattr(kind, "_is_protocol", False) and not isinstance(provided, kind):
            plugin = self._kernel.capabilities.plugin_of(capability.name)
            raise ServiceUnavailable(f"plugin {plugin!r} provided {type(provided).__name__} where {kind.__name__} was asked for (a bug in that plugin)")
        return provided

    def readable_roots(self) -> tuple[str, ...]:
        # Each skill's folder and its SKILL.md (which may be a symlink to a file elsewhere).
        # Not workspace skills: they are readable already, and one whose real folder lies
        # outside (a symlink someone planted) must not widen what the tools can read.
        skills = [s for s in self._kernel.skill_catalog.prompt_skills(self.agent_id) if s.source != "workspace"]
        return tuple(dict.fromkeys(os.path.realpath(p) for s in skills for p in (s.location.parent, s.location)))

    # -- long-term memory ----------------------------------------------------------------------
    # Always this turn's agent: a tool cannot name another agent, so one agent's turn never
    # searches or reads another's memory (the provider keeps each agent to its own files).

    def _memory(self) -> MemoryProvider:
        provider = self._kernel.memory_provider
        if provider is None:
            raise ServiceUnavailable("no memory provider is installed, so there is no memory index to search; the memory files can still be read with read")
        return provider

    async def memory_search(self, query: str, *, max_results: int | None = None, min_score: float | None = None) -> MemorySearch:
        return await self._memory().search(query, agent_id=self.agent_id, max_results=max_results, min_score=min_score)

    async def memory_get(self, path: str, *, from_line: int = 1, lines: int | None = None) -> MemoryExcerpt:
        return await self._memory().get(path, agent_id=self.agent_id, from_line=from_line, lines=lines)

    def agents(self) -> list[AgentSummary]:
        config = self._kernel.config
        default = config.default_agent_id()
        found = []
        main = self._is_main()
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
                    may_spawn=self.shared.subagents.may_spawn_agent(self.agent_id, agent_id, main=main, reachable=self._agent_reachable),
                )
            )
        return found

    # -- who may reach whom ------------------------------------------------------------------
    # Only an agent's main session (its owner's) looks beyond itself: a group or another
    # person's DM must not read the owner's conversations, message strangers or drive other
    # agents. Other agents' sessions need `tools.agent_to_agent` to name both agents.

    def _is_main(self) -> bool:
        """The main session's reach (other sessions, other chats) is the owner's: a paired or
        allow-listed person writing into it (``session.non_owners_share_main``), or a turn
        they caused, gets only their own chat."""
        return session_kind(self.session_key) == "main" and self.trust is TurnTrust.OWNER

    def _agent_reachable(self, agent_id: str) -> bool:
        if agent_id == self.agent_id:
            return True
        allowed = set(self._kernel.config.tools.agent_to_agent)
        return "*" in allowed or {agent_id, self.agent_id} <= allowed

    def _check_reach(self, session_key: str) -> None:
        if session_key == self.session_key:
            return
        if not self._is_main():
            raise ServiceUnavailable(f"this is a {session_kind(self.session_key)} session: only the agent's main session may reach other sessions")
        target = agent_of(session_key)
        if not self._agent_reachable(target):
            raise ServiceUnavailable(f"agent {self.agent_id!r} may not reach agent {target!r}; list both in tools.agent_to_agent to allow it")

    def sessions(self, *, limit: int = 20, agent_id: str | None = None) -> list[SessionSummary]:
        if not self._is_main():
            own = self._kernel.sessions.get(self.session_key)
            infos = [own] if own is not None else []
        else:
            infos = [i for i in self._kernel.sessions.list(agent_id) if self._agent_reachable(agent_of(i.key))]
        infos = infos[: max(0, limit)]
        return [SessionSummary(i.key, agent_of(i.key), i.session_id, i.updated_at, i.model, i.turns, i.usage, i.cost_usd) for i in infos]

    def history(self, session_key: str, *, limit: int = 20, include_tools: bool = False) -> list[Message]:
        self._check_reach(session_key)
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
        from clawbot.agent.user_turns import history_form

        # Who wrote each message, said by clawbot, without the metadata blocks of its turn.
        return [history_form(m) for m in messages[-limit:]] if limit > 0 else []

    async def send_to_session(self, session_key: str, text: str, *, timeout_s: float) -> str | None:
        self._check_reach(session_key)
        waiting = (*_WAITING.get(), self.session_key)
        if len(waiting) > MAX_SEND_DEPTH:
            raise ServiceUnavailable(f"sessions_send is nested {len(waiting)} deep ({' -> '.join(waiting)}); answer instead")
        if session_key in waiting:
            raise ServiceUnavailable(f"{session_key} is waiting on this very exchange ({' -> '.join(waiting)}); sending to it would deadlock")
        config = self._kernel.config
        if agent_of(session_key) not in (config.agent_ids() or [config.default_agent_id()]):
            raise ServiceUnavailable(f"no agent {agent_of(session_key)!r} is configured for {session_key}")
        conversation = await self.shared.conversation(agent_of(session_key))
        from clawbot.agent.inbound import SESSION_CHANNEL
        from clawbot.agent.user_turns import session_message

        # Labelled by clawbot with who sent it; the receiving model cannot be told otherwise.
        message = session_message(text, from_session=self.session_key, from_agent=self.agent_id)

        from clawbot.agent.turn_options import TurnOptions

        options = TurnOptions(trust=self.trust)  # the receiving turn carries no more than this one

        async def turn() -> str:
            _WAITING.set(waiting)
            return (await conversation.send(session_key, message, channel=SESSION_CHANNEL, options=options)).text

        if timeout_s <= 0:
            running = sum(1 for t in self.shared.background if t.get_name().startswith("sessions_send:"))
            if running >= MAX_BACKGROUND_SENDS:
                raise ServiceUnavailable(f"{running} sends are already running in the background; wait for them")
            self.shared.spawn(turn(), name=f"sessions_send:{session_key}")
            return None
        return await asyncio.wait_for(turn(), timeout_s)

    def channels(self) -> list[str]:
        return self.shared.port.channel_names() if self.shared.port is not None else []

    async def send_message(self, message: OutboundMessage) -> None:
        port = self.shared.port
        if port is None:
            raise ServiceUnavailable(f"cannot send on {message.channel}: {NO_GATEWAY}")
        origin = self.origin
        same_chat = origin is not None and (message.channel, message.peer_id) == (origin.channel, origin.peer_id)
        if not same_chat and not self._is_main():
            raise ServiceUnavailable(f"this is a {session_kind(self.session_key)} session: it may only message its own chat")
        await port.deliver(message, self.session_key)

    def request_approval(self, request: ApprovalRequest) -> ApprovalTicket:
        port, origin = self.shared.port, self.origin or self.shared.local_origin
        if port is None or origin is None:
            raise ServiceUnavailable(f"nobody can be asked for approval: {NO_GATEWAY}")
        from clawbot.agent.approvals import notice_text, offer
        from clawbot.agent.owners import is_owner, owner_ids_for
        from clawbot.types import ApprovalRefused

        if self.trust is not TurnTrust.OWNER or not is_owner(origin, owner_ids_for(self._kernel.config, origin.channel)):
            # Only the owner may approve, so a request from someone else's turn could never
            # be answered: refuse now rather than leave it pending for the owner to stumble on.
            raise ApprovalRefused(
                "refused: only the owner can approve actions, and this message is not from the owner "
                "(someone else in a group or another person's chat). Nothing ran and nothing is pending; "
                "do not retry it here. Say that it needs the owner to ask for it in their own chat."
            )
        if origin.channel not in port.channel_names():  # a heartbeat with no chat to answer: nobody would see it
            raise ServiceUnavailable("nobody can be asked for approval: this turn answers no chat. Nothing ran and nothing is pending.")
        ticket = self.shared.approvals.register(self.session_key, request)
        # The kernel shows the exact command itself: the model's relay is not trusted.
        notice = attrs.evolve(origin.answer(notice_text(ticket, request)), approval=offer(ticket, request))
        self.shared.spawn(port.deliver(notice, self.session_key, notice=True), name=f"approval-notice:{ticket.id}")
        return ticket

    async def post_system_event(self, text: str) -> None:
        origin = self.origin or self.shared.local_origin
        if self.shared.port is None or origin is None:
            raise ServiceUnavailable(f"cannot report back to the chat: {NO_GATEWAY}")
        self.shared.port.inject(origin, self.session_key, text)

    # -- sub-agents ----------------------------------------------------------------------------

    async def spawn_subagent(self, task: str, *, agent_id: str | None = None, model: str | None = None, timeout_s: float | None = None) -> SubagentSummary:
        from clawbot.agent.policy import agent_tools

        config = self._kernel.config
        target = agent_id or self.agent_id
        if target not in (config.agent_ids() or [config.default_agent_id()]):
            raise ServiceUnavailable(f"no agent {target!r} is configured; agents_list shows them")
        if not self.shared.subagents.may_spawn_agent(self.agent_id, target, main=self._is_main(), reachable=self._agent_reachable):
            raise ServiceUnavailable(
                f"agent {self.agent_id!r} may not start a sub-agent of agent {target!r}: only the main session may, "
                "with both listed in tools.agent_to_agent; agents_list shows which agents may be spawned"
            )
        if model is not None and self.trust is not TurnTrust.OWNER:  # as /model: the owner's choice
            raise ServiceUnavailable("only the owner's turns may pick a sub-agent's model; leave model out to use the agent's own")
        return await self.shared.subagents.spawn(
            task=task,
            parent_agent=self.agent_id,
            parent_session_key=self.session_key,
            parent_origin=self.origin,
            trust=self.trust,
            parent_tools=self.tools if self.tools is not None else frozenset(agent_tools(self._kernel, self.agent_id)),
            agent_id=target,
            model=model,
            timeout_s=timeout_s,
        )

    def subagents(self) -> list[SubagentSummary]:
        return self.shared.subagents.of_parent(self.session_key)
