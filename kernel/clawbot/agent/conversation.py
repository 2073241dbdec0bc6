"""One agent turn: the model thinks and calls tools until it is done.

Each turn runs in the session's lane. The history comes from the session's JSONL
transcript; the user message, every model reply and every tool result are appended as they
happen, so a killed process loses at most the step it was in (and loading repairs that).
The loop: call the model; run the reply's tool calls (in call order, read-only ones together:
:mod:`clawbot.agent.toolbatch`) and append each result in call order; repeat until a reply
without tool calls or the iteration limit.

Model calls go through :class:`~clawbot.agent.failover.ModelCaller` (auth profile rotation,
retries, thinking downgrade, fallback models for this call only). Before each request, a
history that would not leave the reserve free in the window is compacted; when the model
says the context overflows, it is compacted once and the call retried; with no strategy
installed the user gets the short overflow message (:mod:`clawbot.agent.compaction`).

Each turn is watched for changes to the agent's bootstrap files (SOUL.md, MEMORY.md ...)
and workspace skills: whatever tool made them, the chat gets a notice from clawbot saying
what changed (:mod:`clawbot.agent.bootstrap_changes`), and ``TurnResult.notices`` holds it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Literal

import attrs

from clawbot.agent.bootstrap_changes import watching_bootstrap_files
from clawbot.agent.clock import Clock, user_timezone, utc_now
from clawbot.agent.compaction import Compactor
from clawbot.agent.compaction_near import NearingTurn, compaction_near, with_note
from clawbot.agent.cost import cost_usd
from clawbot.agent.failover import ModelCaller
from clawbot.agent.models import ModelChoice, resolve_ref
from clawbot.agent.owners import owner_ids_for, turn_trust
from clawbot.agent.policy import agent_tools
from clawbot.agent.pruning import SessionPruning
from clawbot.agent.services import SharedServices
from clawbot.agent.session_control import open_for_turn
from clawbot.agent.system_prompt import (
    BuiltPrompt,
    PromptRequest,
    build_system_prompt,
)
from clawbot.agent.toolbatch import run_tool_calls
from clawbot.agent.toolrun import ToolRunContext
from clawbot.agent.truncation import fit_tool_results
from clawbot.agent.turn_options import TurnOptions
from clawbot.agent.user_turns import as_sent, event_trust, user_message
from clawbot.kernel import Kernel
from clawbot.paths import expand_user_path
from clawbot.sessions.index import SessionInfo
from clawbot.sessions.settings import setting_of
from clawbot.sessions.store import Session
from clawbot.types import (
    AgentEndEvent,
    InboundMessage,
    Message,
    ModelRequest,
    ProviderError,
    SystemPrompt,
    TextSink,
    Tool,
    ToolCallBlock,
    ToolSpec,
    TurnTrust,
    Usage,
)

log = logging.getLogger(__name__)

ToolCallsSink = Callable[[tuple[ToolCallBlock, ...]], Awaitable[None]]


@attrs.frozen
class TurnResult:
    text: str
    model: str
    usage: Usage
    iterations: int = 1
    tool_calls: int = 0
    stopped: str | None = None  # "iteration_limit" or "aborted"
    auth_profile: str | None = None
    cost_usd: float | None = None  # None: no price configured for a model this turn used
    thinking: str | None = None  # the thinking level the last model call ran with
    #: clawbot's own reports on the turn (a compaction, changed bootstrap files), already sent
    #: to the chat the turn came from; a CLI run prints them itself
    notices: tuple[str, ...] = ()


def _total(costs: list[float | None]) -> float | None:
    return None if not costs or any(c is None for c in costs) else sum(c for c in costs if c is not None)


@attrs.define
class Conversation:
    kernel: Kernel
    model: ModelChoice
    agent_id: str
    #: by default the registered tools the agent's policy allows (those whose engine is installed)
    tools: dict[str, Tool] = attrs.Factory(lambda self: agent_tools(self.kernel, self.agent_id), takes_self=True)
    fallbacks: list[ModelChoice] = attrs.Factory(list)
    explicit_model: bool = False  # the chain is the first model alone (a session's /model choice is one too)
    caller_sleep: Any = None  # tests make failover back-off instant
    #: model ref -> thinking level it accepted after rejecting a higher one (kept across turns)
    accepted_thinking: dict[str, str] = attrs.Factory(dict)
    #: sessions, channels and approvals for the tools, given by whoever builds the conversation
    #: (:meth:`AgentRuntime.conversation`); ``None`` says it is a bare embedding whose tools
    #: get no services. Keyword-only and required, so nobody leaves them out by accident.
    services: SharedServices | None = attrs.field(kw_only=True)
    #: the bootstrap and skill files as last read, so a turn reads only those whose stat changed
    bootstrap_states: dict[Any, Any] = attrs.Factory(dict)
    #: what time it is (the daily and idle resets, the date ``clawbot_compaction_near`` tells); tests move it
    clock: Clock = utc_now

    def __attrs_post_init__(self) -> None:
        # agents.defaults.context_tokens caps every model of the chain, however it was chosen
        cap = self.kernel.config.agents.defaults.context_tokens
        if cap:
            self.model = attrs.evolve(self.model, context_tokens=self.model.context_tokens or cap)
            self.fallbacks = [attrs.evolve(f, context_tokens=f.context_tokens or cap) for f in self.fallbacks]

    @property
    def workspace(self):  # noqa: ANN201 - Path
        return expand_user_path(self.kernel.config.agent_workspace(self.agent_id), self.kernel.env)

    def models_for(self, info: SessionInfo | None) -> list[ModelChoice]:
        """The models a turn of the session ``info`` may use, first one first: the one chosen
        with ``/model`` alone (an explicit choice never falls back), else the agent's chain."""
        if info is not None and info.model_override:
            return [resolve_ref(self.kernel, info.model_override)]
        return [self.model] if self.explicit_model else [self.model, *self.fallbacks]

    def model_caller(self, chain: list[ModelChoice]) -> ModelCaller:
        """The caller of ``chain`` for one turn or one ``/compact`` (key rotation, retries,
        the thinking levels this conversation learned)."""
        adapter = self.kernel.tool_call_adapter
        caller = ModelCaller(chain, self.kernel.auth, accepted_thinking=self.accepted_thinking, tool_adapter=adapter)
        if adapter is not None:
            plugin = self.kernel.tool_call_adapters.plugin_of(adapter.name)
            caller.adapter_failed = lambda exc: self.kernel.plugins.record_failure(plugin, "clawbot_tool_call_adapters", exc)
        if self.caller_sleep is not None:
            caller.sleep = self.caller_sleep
        return caller

    def model_of(self, session_key: str) -> ModelChoice:
        """The model the next turn of ``session_key`` starts with."""
        return self.models_for(self.kernel.sessions.get(session_key))[0]

    async def build_prompt(self, session_key: str, channel: str | None, model: ModelChoice | None = None) -> BuiltPrompt:
        """This session's system prompt and what it was built from (``clawbot context``)."""
        model = model or self.model_of(session_key)
        request = PromptRequest(
            agent_id=self.agent_id,
            session_key=session_key,
            workspace=self.workspace,
            tools=self.tools,
            model=model.ref,
            channel=channel,
            thinking=self.kernel.config.agents.defaults.thinking,
            reasoning_tags=bool(getattr(model.provider, "reasoning_tags", False)),
        )
        return await build_system_prompt(self.kernel, request)

    async def system_prompt(self, session_key: str, channel: str | None, model: ModelChoice | None = None) -> SystemPrompt:
        return (await self.build_prompt(session_key, channel, model)).system

    async def send(
        self,
        session_key: str,
        text: str | Message,
        *,
        channel: str | None = None,
        on_text: TextSink | None = None,
        origin: InboundMessage | None = None,
        on_tool_calls: ToolCallsSink | None = None,
        options: TurnOptions | None = None,
        earlier: Sequence[InboundMessage] = (),
    ) -> TurnResult:
        """Run one turn; ``origin`` is the channel message that asked (``None`` for CLI and
        agent-to-agent turns) and is where approvals and system events report back.
        ``earlier``: messages of the same chat that waited while the previous turn ran,
        stored before ``text`` each with its own sender and answered by this one turn.
        ``text`` may be a user message built already (another session's, with its facts).
        ``on_text`` gets the replies' text as it streams, ``on_tool_calls`` each reply's
        tool calls before they run. ``options``: this turn's directives and watchers."""
        store = self.kernel.sessions
        async with store.lane(session_key):
            system_event = bool(origin and origin.system_event)
            session = await open_for_turn(self.kernel, session_key, self.clock(), system_event=system_event, services=self.services, origin=origin)
            channel = channel or (origin.channel if origin else None)
            watched = watching_bootstrap_files(
                self.kernel,
                self.agent_id,
                self.workspace,
                session_key,
                services=self.services,
                origin=origin,
                cache=self.bootstrap_states,
            )
            options = options or TurnOptions()
            owner_ids = owner_ids_for(self.kernel.config, origin.channel) if origin is not None else ()
            # one turn answers the messages that waited too: it is the owner's only if all are
            waited = [turn_trust(m, owner_ids_for(self.kernel.config, m.channel)) for m in earlier]
            trust = TurnTrust.least(turn_trust(origin, owner_ids, options.trust), *waited)
            # an event answers whoever wrote since the turn that caused it, too; so does a turn
            # nobody vouched for (a plugin's, with no origin and no trust): never more trusted than what it reads
            if system_event or (origin is None and options.trust is None):
                trust = event_trust(trust, (session.loaded or session.transcript.load()).messages())
            async with watched as watching:
                try:
                    result = await self._loop(session, session_key, text, channel, on_text, origin, trust, on_tool_calls, options, earlier)
                except asyncio.CancelledError:
                    session.transcript.append("custom", kind="aborted", reason="the turn was cancelled")
                    await self._ended(session_key, options, "aborted")
                    raise
                except Exception:
                    await self._ended(session_key, options, "error")
                    raise
                if self.services is not None:  # the turn's own notices (a compaction) reach its chat too
                    for notice in result.notices:
                        await self.services.tell_chat(origin, session_key, notice)
            await store.record_turn_merged(
                session_key,
                usage=result.usage,
                model=result.model,
                auth_profile=result.auth_profile,
                cost_usd=result.cost_usd,
                session_id=session.info.session_id,
                thinking=result.thinking,
                transcript=session.transcript,
                system_event=system_event,
                kind=options.kind,
            )
        await self._ended(session_key, options, "ok", result.usage)
        return attrs.evolve(result, notices=(*session.notices, *result.notices, *watching.notices))

    async def _ended(self, session_key: str, options: TurnOptions, status: Literal["ok", "error", "aborted"], usage: Usage | None = None) -> None:
        """``clawbot_agent_end``: plugins see every turn end, whatever started it."""
        event = AgentEndEvent(self.agent_id, session_key, options.kind, status, usage or Usage())
        try:
            await self.kernel.plugins.notify("clawbot_agent_end", event=event)
        except Exception:  # an observer never changes how the turn ended
            log.exception("clawbot_agent_end failed")

    async def _loop(
        self,
        session: Session,
        session_key: str,
        text: str | Message,
        channel: str | None,
        on_text: TextSink | None,
        origin: InboundMessage | None,
        trust: TurnTrust,
        on_tool_calls: ToolCallsSink | None = None,
        options: TurnOptions = TurnOptions(),  # noqa: B008 - frozen, never changed
        earlier: Sequence[InboundMessage] = (),
    ) -> TurnResult:
        # a directive's model is an explicit choice for this turn: no fallback, like /model
        chain = [resolve_ref(self.kernel, options.model, self.agent_id)] if options.model else self.models_for(session.info)
        model = chain[0]
        messages = (session.loaded or session.transcript.load()).messages()

        zone = user_timezone(self.kernel.config.agents.defaults.timezone)[0]
        config = self.kernel.config
        for waited in earlier:  # each message's own channel says whose ids make its sender the owner
            before = user_message(waited.text, waited, zone=zone, owner_ids=owner_ids_for(config, waited.channel))
            session.transcript.append_message(before)
            messages.append(before)
        user = user_message(text, origin, zone=zone, owner_ids=owner_ids_for(config, origin.channel) if origin is not None else ())
        session.transcript.append_message(user)
        messages.append(user)
        system = await self.system_prompt(session_key, channel, model)
        specs = tuple(ToolSpec(t.name, t.description, t.parameters) for t in self.tools.values())
        window = model.info().context_window
        services = None if self.services is None else self.services.for_turn(self.agent_id, session_key, origin, model.ref, self.tools, trust=trust)
        run_ctx = ToolRunContext(self.kernel, self.tools, self.agent_id, session_key, self.workspace, services=services, trust=trust)
        usage, calls = Usage(), 0
        costs: list[float | None] = []
        limit = max(1, self.kernel.config.agents.defaults.max_iterations)
        caller = self.model_caller(chain)
        pinned = session.info.auth_profile
        thinking: str | None = None
        overflowed = False
        used = model.ref
        pruning = SessionPruning.open(self.kernel.config.agents.defaults.context_pruning, session.transcript.path, lambda: self.clock().timestamp())
        compactor = Compactor.for_turn(self, session_key, session, chain, caller)
        compactor.fresh_estimate = lambda: pruning.replanned

        def build(history: list[Message], system_prompt: SystemPrompt | None = None) -> ModelRequest:
            thinking_level = options.thinking or setting_of(session.info.settings, "think", self.kernel.config.agents.defaults.thinking)
            return ModelRequest(
                model=model.model,
                system=system_prompt or system,
                messages=fit_tool_results(pruning.request_messages(as_sent(history), window, len(system.text)), window),
                tools=specs,
                thinking=thinking_level,
            )

        async def ask(history: list[Message], note: str) -> Message:
            return (await caller.complete(build(history, with_note(system, note)), None, pinned)).message

        async def run_tools(reply: Message, history: list[Message]) -> None:
            await run_tool_calls(run_ctx, reply.tool_calls, history.append)

        nearing = NearingTurn(self.kernel, self.agent_id, session_key, session, trust, self.clock, ask, run_tools)

        async def near(history: list[Message], tokens: int, threshold: int) -> Usage | None:
            return await compaction_near(nearing, history, tokens, threshold)

        compactor.near = near

        def record(result_message: Message) -> None:  # each tool result, in call order, as it is known
            session.transcript.append_message(result_message)
            messages.append(result_message)

        try:
            for iteration in range(1, limit + 1):
                messages, request = await compactor.before_request(messages, build)
                try:
                    outcome = await caller.complete(request, on_text, pinned)
                except ProviderError as error:
                    if error.kind != "context_overflow" or overflowed:
                        raise
                    messages = await compactor.after_overflow(messages, error)  # or raises it
                    overflowed = True
                    continue
                reply, pinned, used, thinking = outcome.message, outcome.profile.id, outcome.choice.ref, outcome.thinking
                compactor.reported(used, reply)
                session.transcript.append_message(reply)
                messages.append(reply)
                usage = usage + (reply.usage or Usage())
                if options.on_reply is not None:
                    await options.on_reply(reply)
                costs.append(cost_usd(self.kernel.config.price_of(used), reply.usage or Usage()))
                if not reply.tool_calls:
                    usage, costs = usage + compactor.usage, costs + compactor.costs
                    notices = tuple(compactor.notices)
                    cost = _total(costs)
                    return TurnResult(reply.text, used, usage, iteration, calls, auth_profile=pinned, cost_usd=cost, thinking=thinking, notices=notices)
                if on_tool_calls is not None:
                    await on_tool_calls(reply.tool_calls)
                outcomes = await run_tool_calls(run_ctx, reply.tool_calls, record)
                calls += len(outcomes)
                if options.on_tool_results is not None:
                    await options.on_tool_results(reply.tool_calls, [outcome[0] for outcome in outcomes])
            notice = f"I stopped after {limit} steps without finishing (agents.defaults.max_iterations). Say 'continue' to let me go on, or narrow the task."
            session.transcript.append("custom", kind="iteration_limit", limit=limit)
            return TurnResult(
                notice,
                used,
                usage + compactor.usage,
                limit,
                calls,
                stopped="iteration_limit",
                auth_profile=pinned,
                cost_usd=_total(costs + compactor.costs),
                thinking=thinking,
                notices=tuple(compactor.notices),
            )
        finally:  # what the turn learned is stored once, whichever way it ends
            pruning.save()
            compactor.budget.save()
