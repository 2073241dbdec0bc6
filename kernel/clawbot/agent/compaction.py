"""Compacting a session's history: when, with which strategy, and what is stored.

A compaction runs in the session's lane, for one of three reasons: the next request would
leave less than ``agents.defaults.compaction.reserve_tokens_floor`` free in the model's
window (``threshold``, checked before every model request, estimated by
:mod:`clawbot.agent.token_budget`); the provider said the context overflowed (``overflow``:
compact, then retry the request once); or the user typed ``/compact [instructions]``
(``manual``). The strategy is the agent's ``agents.list[].compaction.strategy``, else the
default one; the kernel gives it the model (``summarize``: one call without tools on the
session's model chain, its usage counted in the turn's), the window, what to keep verbatim
and the previous summary.

A strategy that fails, returns an empty summary or an index outside the history changes
nothing: no entry is written, a warning is logged and the conversation goes on with its
whole history (an overflow then ends the turn with the short overflow message). A good
result is a ``compaction`` transcript entry (summary, method, detail, strategy, reason,
tokens before and after, ``first_kept_id``) followed by the kept messages written again,
so loading stays "everything after the last compaction"; a tool result is never kept
without its call, and the user reads one short notice.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

import attrs

from clawbot.agent.cost import cost_usd
from clawbot.agent.failover import ModelCaller
from clawbot.agent.inbound import render_summary
from clawbot.agent.models import ModelChoice
from clawbot.agent.token_budget import TokenBudget, TokenCalibrations
from clawbot.sessions.store import Session
from clawbot.sessions.transcript import Entry
from clawbot.types import (
    CompactionEvent,
    CompactionReason,
    CompactionRequest,
    CompactionResult,
    CompactionStrategy,
    Message,
    ModelRequest,
    ProviderError,
    Role,
    SystemPrompt,
    Usage,
)

if TYPE_CHECKING:
    from clawbot.agent.conversation import Conversation
    from clawbot.kernel import Kernel

log = logging.getLogger(__name__)

NOTHING_YET = "Nothing to compact yet: the conversation is still short."
NO_STRATEGY = "No compaction strategy is installed, so the conversation cannot be compacted (a plugin offers one)."
FAILED = "The conversation could not be compacted (the log says why); it goes on unchanged."
NOT_SHORTER = "Nothing to compact: a summary would not be shorter than the conversation it replaces."


def strategy_for(kernel: Kernel, agent_id: str) -> CompactionStrategy | None:
    """The agent's own ``agents.list[].compaction.strategy``, else the default one."""
    for agent in kernel.config.agents.list:
        if agent.id == agent_id and agent.compaction is not None and agent.compaction.strategy:
            return kernel.compaction_strategies.get(agent.compaction.strategy)
    return kernel.compaction_strategy


def compacted_text(result: CompactionResult) -> str:
    return f"Compacted the conversation: {result.tokens_before:,} -> {result.tokens_after:,} tokens ({result.method})."


@attrs.frozen
class Outcome:
    """What one compaction did: ``messages`` is the new history (``None``: unchanged) and
    ``text`` what the user reads about it."""

    messages: list[Message] | None
    text: str


@attrs.define
class Compactor:
    """Compacts one session's history, for one turn or one ``/compact``."""

    kernel: Kernel
    agent_id: str
    session_key: str
    session: Session
    chain: list[ModelChoice]
    caller: ModelCaller
    budget: TokenBudget
    usage: Usage = attrs.Factory(Usage)  # of the summary calls, counted in the turn's
    costs: list[float | None] = attrs.Factory(list)
    notices: list[str] = attrs.Factory(list)
    #: set by a threshold compaction, cleared by the next reply: a history that still does
    #: not fit right after one is sent as it is (the provider decides), not compacted again
    _just_compacted: bool = False

    @classmethod
    def for_turn(cls, conversation: Conversation, session_key: str, session: Session, chain: list[ModelChoice], caller: ModelCaller) -> Compactor:
        budget = TokenBudget(TokenCalibrations(conversation.kernel.paths.root), chain[0].ref)
        return cls(conversation.kernel, conversation.agent_id, session_key, session, chain, caller, budget)

    @property
    def window(self) -> int:
        return self.chain[0].info().context_window

    async def before_request(self, messages: list[Message], build: Callable[[list[Message]], ModelRequest]) -> tuple[list[Message], ModelRequest]:
        """The history and the request to send: compacted first when the request would not
        leave the reserve free. The estimate is remembered, for :meth:`reported`."""
        request = build(messages)
        estimate = self.budget.expect(request)
        limit = self.window - self.kernel.config.agents.defaults.compaction.reserve_tokens_floor
        if estimate <= limit or self._just_compacted or strategy_for(self.kernel, self.agent_id) is None:
            return messages, request
        log.info("%s: the next request needs about %s tokens, over %s: compacting", self.session_key, f"{estimate:,}", f"{limit:,}")
        self._just_compacted = True
        compacted = (await self.compact(messages, "threshold", tokens_before=estimate)).messages
        if compacted is None:
            return messages, request
        request = build(compacted)
        self.budget.expect(request)
        return compacted, request

    async def after_overflow(self, messages: list[Message], error: ProviderError) -> list[Message]:
        """The compacted history to retry with; raises ``error`` when nothing was compacted."""
        compacted = (await self.compact(messages, "overflow")).messages
        if compacted is None:
            raise error
        return compacted

    def reported(self, model_ref: str, reply: Message) -> None:
        """A reply arrived: learn from its usage; the history may be compacted again."""
        self._just_compacted = False
        self.budget.reported(model_ref, reply.usage)

    async def summarize(self, system: str, prompt: str) -> str:
        """The :class:`~clawbot.types.SummaryCall` a strategy gets: one call without tools on
        the session's chain, recorded nowhere but in the turn's usage and cost."""
        request = ModelRequest(model=self.chain[0].model, system=SystemPrompt(system), messages=(Message.user(prompt),), thinking="off")
        outcome = await self.caller.complete(request)
        usage = outcome.message.usage or Usage()
        self.usage = self.usage + usage
        self.costs.append(cost_usd(self.kernel.config.price_of(outcome.choice.ref), usage))
        return outcome.message.text

    async def compact(self, messages: list[Message], reason: CompactionReason, instructions: str | None = None, *, tokens_before: int | None = None) -> Outcome:
        """Compact ``messages`` (the history as the turn holds it, the previous summary first
        when there is one); never raises for what the strategy does."""
        strategy = strategy_for(self.kernel, self.agent_id)
        if strategy is None:
            return Outcome(None, NO_STRATEGY)
        entries = self.session.transcript.load().entries  # from the last compaction on
        previous = next((e for e in reversed(entries) if e.type == "compaction"), None)
        body = _without_summary(messages, previous)
        if len(body) < 2:
            return Outcome(None, NOTHING_YET)
        info = self.chain[0].info()
        settings = self.kernel.config.agents.defaults.compaction
        request = CompactionRequest(
            tuple(body),
            self.chain[0].model,
            instructions=instructions or None,
            keep_recent_tokens=settings.keep_recent_tokens,
            context_window=info.context_window,
            reason=reason,
            previous_summary=previous.data.get("summary") if previous is not None else None,
            summarize=self.summarize,
        )
        before = tokens_before if tokens_before is not None else self.budget.calibrated(_rough(body))
        event = CompactionEvent(self.agent_id, self.session_key, self.session.info.session_id, tokens_before=before)
        await self.kernel.plugins.notify("clawbot_before_compaction", event=event)
        try:
            result = await strategy.compact(request)
        except Exception:
            log.warning("%s: compaction strategy %r failed; the history stays as it is", self.session_key, strategy.name, exc_info=True)
            return Outcome(None, FAILED)
        problem = _problem(result, len(body))
        if problem is not None:
            log.warning("%s: compaction strategy %r %s; the history stays as it is", self.session_key, strategy.name, problem)
            return Outcome(None, FAILED)
        start = result.first_kept_index
        while 0 < start < len(body) and body[start].role == Role.TOOL_RESULT:
            start -= 1  # never keep a tool result without the call it answers
        if start == 0:
            return Outcome(None, NOTHING_YET)
        kept = body[start:]
        entry = self._store(result, strategy.name, reason, kept, _entry_id_of(entries, kept[0]))
        await self.kernel.plugins.notify(
            "clawbot_after_compaction",
            event=attrs.evolve(event, tokens_after=result.tokens_after, summary=result.summary),
        )
        text = compacted_text(result)
        if reason != "manual":
            self.notices.append(text)
        # A kept reply's usage counted a request that no longer exists: the next estimate
        # must not start from it.
        return Outcome([Message.user(render_summary(result.summary, entry.id)), *(_unreported(m) for m in kept)], text)

    def _store(self, result: CompactionResult, strategy: str, reason: CompactionReason, kept: list[Message], first_kept_id: str | None) -> Entry:
        """The compaction entry, the kept messages on its own line (loading reads only from
        the last compaction on): a process killed while writing it leaves a torn line that
        loading skips, so the history is as it was or compacted, never half of it."""
        return self.session.transcript.append(
            "compaction",
            kept=tuple(_unreported(m) for m in kept),
            summary=result.summary,
            method=result.method,
            detail=result.detail,
            strategy=strategy,
            reason=reason,
            tokens_before=result.tokens_before,
            tokens_after=result.tokens_after,
            first_kept_id=first_kept_id,
        )


def _rough(messages: list[Message]) -> int:
    from clawbot.agent.context_guard import messages_tokens

    return messages_tokens(messages)


def _unreported(message: Message) -> Message:
    return attrs.evolve(message, usage=None) if message.usage is not None else message


def _problem(result: object, length: int) -> str | None:
    if not isinstance(result, CompactionResult):
        return f"returned {type(result).__name__}, not a CompactionResult"
    if not isinstance(result.summary, str) or not result.summary.strip():
        return "returned an empty summary"
    if not isinstance(result.first_kept_index, int) or not 0 <= result.first_kept_index <= length:
        return f"returned first_kept_index {result.first_kept_index!r}, outside the history of {length} messages"
    return None


def _without_summary(messages: list[Message], previous: Entry | None) -> list[Message]:
    """The history without the previous summary's message (a strategy gets that summary as
    ``previous_summary``)."""
    if previous is not None and messages and messages[0].role == Role.USER:
        summary = previous.data.get("summary")
        if isinstance(summary, str) and messages[0].text == render_summary(summary, previous.id):
            return messages[1:]
    return list(messages)


def _entry_id_of(entries: list[Entry], message: Message) -> str | None:
    """The id of the newest transcript entry holding ``message`` (the first kept one)."""
    wanted = _unreported(message)
    for entry in reversed(entries):
        if entry.type == "message" and entry.message is not None and _unreported(entry.message) == wanted:
            return entry.id
    return None


async def compact_session(conversation: Conversation, session_key: str, instructions: str | None = None) -> str:
    """``/compact [instructions]``: compact the session now, in its lane; the reply."""
    kernel = conversation.kernel
    store = kernel.sessions
    async with store.lane(session_key):
        if store.get(session_key) is None:
            return NOTHING_YET
        session = store.open(session_key)
        messages = (session.loaded or session.transcript.load()).messages()
        chain = conversation.models_for(session.info)
        caller = ModelCaller(chain, kernel.auth, accepted_thinking=conversation.accepted_thinking)
        if conversation.caller_sleep is not None:
            caller.sleep = conversation.caller_sleep
        compactor = Compactor.for_turn(conversation, session_key, session, chain, caller)
        outcome = await compactor.compact(messages, "manual", instructions)
    return outcome.text
