"""Compacting a session's history: when, with which strategy, and what is stored.

A compaction runs in the session's lane, for one of three reasons: the next request would
pass the compaction line of :class:`~clawbot.agent.token_budget.ContextLimits`
(``threshold``, checked before every model request; ``clawbot_compaction_near`` runs first when due);
the provider said the context overflowed (``overflow``: compact, then retry the request
once); or the user typed ``/compact [instructions]`` (``manual``). The strategy is the
agent's ``agents.list[].compaction.strategy``, else the default one; the kernel gives it the
model (``summarize``: one call without tools on the session's model chain, its usage counted
in the turn's), the window, what to keep verbatim and the previous summary.

The kernel checks what it stores. A strategy that fails, returns an empty summary or an index
outside the history changes nothing (a warning is logged, the conversation goes on with its
whole history); neither does a summary no shorter than what it replaces. Within a turn the
message that asked for it is always kept. A good result is one ``compaction`` transcript line
(summary, method, detail, strategy, reason, tokens before and after, ``first_kept_id`` and
the kept messages), so a process killed while writing it leaves the history as it was; a
tool result is never kept without its call, and the user reads one short notice.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

import attrs

from clawbot.agent.context_guard import messages_tokens
from clawbot.agent.cost import cost_usd
from clawbot.agent.failover import ModelCaller
from clawbot.agent.models import ModelChoice
from clawbot.agent.notices import quoted_line
from clawbot.agent.token_budget import ContextLimits, TokenBudget, TokenCalibrations
from clawbot.agent.user_turns import speaker
from clawbot.kernel import Kernel
from clawbot.sessions.store import Session
from clawbot.sessions.summary import render_summary
from clawbot.sessions.transcript import Entry
from clawbot.tokens import estimate_tokens
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

if TYPE_CHECKING:  # the conversation builds the compactor with itself (a back-pointer still to untangle)
    from clawbot.agent.conversation import Conversation

log = logging.getLogger(__name__)

NOTHING_YET = "Nothing to compact yet: the conversation is still short."
NO_STRATEGY = "No compaction strategy is installed, so the conversation cannot be compacted (a plugin offers one)."
FAILED = "The conversation could not be compacted (the log says why); it goes on unchanged."
#: a history under this share of the window is not compacted: the rest of the window is the
#: system prompt and the tools, which no compaction shrinks
MIN_HISTORY_SHARE = 0.1
#: within a turn, another compaction waits until the history has grown by this share of the
#: room the last one left, plus this share of the window
REGROWTH_SHARE = 0.25
REGROWTH_FLOOR = 0.05
NOT_SHORTER = "Nothing to compact: a summary would not be shorter than the conversation it replaces."


def strategy_for(kernel: Kernel, agent_id: str) -> CompactionStrategy | None:
    """The agent's own ``agents.list[].compaction.strategy``, else the default one."""
    for agent in kernel.config.agents.list:
        if agent.id == agent_id and agent.compaction is not None and agent.compaction.strategy:
            return kernel.compaction_strategies.get(agent.compaction.strategy)
    return kernel.compaction_strategy


def compacted_text(result: CompactionResult) -> str:
    """The user's one line about a compaction; a trim says why no model summarised."""
    text = f"Compacted the conversation: {result.tokens_before:,} -> {result.tokens_after:,} tokens ({result.method})."
    if result.method == "trim" and result.detail.strip():
        text += f" {quoted_line(result.detail.strip())[:200]}"
    return text


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
    #: tells the plugins the turn's history nears compaction (``clawbot_compaction_near``:
    #: the memory flush), beside the turn (nothing of it joins the history): what they spent,
    #: or ``None`` when nothing ran (set by the conversation; a ``/compact`` has none)
    near: Callable[[list[Message], int, int], Awaitable[Usage | None]] | None = None
    #: whether the next request differs from the last reported one in more than what was
    #: appended (pruning changed its mind), so the estimate must not start from that report
    fresh_estimate: Callable[[], bool] = lambda: False
    #: the estimate right after this turn's last threshold compaction: another one waits
    #: until the history has grown by a quarter of the room, and none follows one that could
    #: not bring the request under the limit (the provider decides; an overflow compacts)
    _floor: int | None = None

    @classmethod
    def for_turn(cls, conversation: Conversation, session_key: str, session: Session, chain: list[ModelChoice], caller: ModelCaller) -> Compactor:
        budget = TokenBudget(TokenCalibrations(conversation.kernel.paths.root), chain[0].ref)
        return cls(conversation.kernel, conversation.agent_id, session_key, session, chain, caller, budget)

    @property
    def window(self) -> int:
        return self.chain[0].info().context_window

    @property
    def limits(self) -> ContextLimits:
        return ContextLimits.of(self.window, self.kernel.config.agents.defaults.compaction)

    async def before_request(self, messages: list[Message], build: Callable[[list[Message]], ModelRequest]) -> tuple[list[Message], ModelRequest]:
        """The history and the request to send: ``clawbot_compaction_near`` first when it is due, then
        compacted when the request would not leave the reserve free. The estimate is
        remembered, for :meth:`reported`."""
        request = build(messages)
        estimate = self.budget.expect(request, fresh=self.fresh_estimate())
        limits = self.limits
        fixed = self.budget.fixed(request)  # the system prompt and the tools: no compaction shrinks them
        if estimate - fixed < limits.window * MIN_HISTORY_SHARE:
            if estimate > limits.compact_at:  # the window is full of the prompt and the tools, not of the conversation
                self._prompt_fills_the_window(fixed, limits.window)
            return messages, request
        if strategy_for(self.kernel, self.agent_id) is None:
            return messages, request  # nothing will summarise the history away: nothing to flush or compact
        # and a request over the window cannot be sent beside the turn either
        flush_line = limits.flush_line(fixed)
        if flush_line <= estimate < limits.window and self.near is not None:
            near, self.near = self.near, None  # asked once a turn: once a cycle is the plugin's rule
            spent = await near(messages, estimate, flush_line)
            if spent is not None:
                self.usage = self.usage + spent
        if estimate <= limits.compact_at or not self._may_compact_again(estimate):
            return messages, request
        log.info("%s: the next request needs about %s tokens, over %s: compacting", self.session_key, f"{estimate:,}", f"{limits.compact_at:,}")
        compacted = (await self.compact(messages, "threshold", tokens_before=estimate)).messages
        if compacted is None:
            self._floor = estimate  # nothing came of it: not again before the history grows
            return messages, request
        request = build(compacted)
        self._floor = self.budget.expect(request, fresh=True)
        return compacted, request

    def _prompt_fills_the_window(self, fixed: int, window: int) -> None:
        if self._floor is None:  # once a turn
            log.warning(
                "%s: the system prompt and tools take about %s of %s tokens; compacting the conversation cannot make room "
                "(shorten the bootstrap files, see clawbot context, or raise agents.defaults.context_tokens)",
                self.session_key,
                f"{fixed:,}",
                f"{window:,}",
            )
        self._floor = fixed

    def _may_compact_again(self, estimate: int) -> bool:
        if self._floor is None:
            return True
        limits = self.limits
        regrown = (limits.compact_at - self._floor) * REGROWTH_SHARE + limits.window * REGROWTH_FLOOR
        return self._floor <= limits.compact_at and estimate - self._floor >= regrown

    async def after_overflow(self, messages: list[Message], error: ProviderError) -> list[Message]:
        """The compacted history to retry with; raises ``error`` when nothing was compacted."""
        compacted = (await self.compact(messages, "overflow")).messages
        if compacted is None:
            raise error
        return compacted

    def reported(self, model_ref: str, reply: Message) -> None:
        """A reply arrived: learn from its usage."""
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
        limits = self.limits
        settings = self.kernel.config.agents.defaults.compaction
        # What is kept verbatim takes at most half the room the system prompt and the tools
        # leave below the limit: the rest is for the summary and for the conversation to go
        # on, or the next request would compact again.
        body_tokens = _rough(body)
        fixed = max(0, (tokens_before or 0) - self.budget.calibrated(body_tokens))
        keep = min(settings.keep_recent_tokens, max(0, limits.compact_at - fixed) // 2)
        request = CompactionRequest(
            tuple(body),
            self.chain[0].model,
            instructions=instructions or None,
            keep_recent_tokens=keep,
            context_window=limits.window,
            reason=reason,
            previous_summary=previous.data.get("summary") if previous is not None else None,
            summarize=self.summarize,
        )
        before = tokens_before if tokens_before is not None else self.budget.calibrated(body_tokens)
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
        # Within a turn, the message that asked for it stays; /compact runs between turns.
        kept = body[start:] if reason == "manual" else _with_the_request(body, start)
        if not kept:  # "summarise everything", and no message of the user's to keep: nothing to start from
            log.warning("%s: compaction strategy %r kept nothing, and no message of the user's is left to keep", self.session_key, strategy.name)
            return Outcome(None, FAILED)
        # Measured by the kernel, not taken from the strategy: a compaction that saves nothing
        # would only lose the words it replaced. (After an overflow the provider has the last
        # word: the retry, once, tells.)
        replaced = body_tokens + estimate_tokens(request.previous_summary or "")  # the old summary goes too
        if reason != "overflow" and estimate_tokens(result.summary) + _rough(kept) >= replaced:
            log.info("%s: the %r summary is no shorter than what it replaces; nothing compacted", self.session_key, strategy.name)
            return Outcome(None, NOT_SHORTER)
        others = others_wrote(body[:start]) or (previous is not None and previous.data.get(OTHERS_WROTE) is not False)
        entry = self._store(result, strategy.name, reason, kept, _entry_id_of(entries, kept[0]), others)
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

    def _store(self, result: CompactionResult, strategy: str, reason: CompactionReason, kept: list[Message], first_kept_id: str | None, others: bool) -> Entry:
        """The compaction entry, the kept messages on its own line (loading reads only from
        the last compaction on): a process killed while writing it leaves a torn line that
        loading skips, so the history is as it was or compacted, never half of it. ``others``:
        whether anyone but the owner wrote in what the summary stands for."""
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
            others_wrote=others,
        )


# The compaction entry's record of whether anyone but the owner wrote in what its summary
# replaced (this compaction's part or an earlier summary's): the summary's words then cannot
# count as the owner's, whatever it says. An entry written before it was recorded counts as yes.
OTHERS_WROTE = "others_wrote"  # the keyword _store writes it under


def others_wrote(messages: list[Message]) -> bool:
    """Whether a user message in ``messages`` carries someone else's words than the owner's:
    written by someone else, or an event a turn of someone else caused."""
    return any(m.role == Role.USER and speaker(m).not_the_owner for m in messages)


def _with_the_request(body: list[Message], start: int) -> list[Message]:
    """``body[start:]``, led by the message that asked for the current turn when the kept part
    begins after it: the model must keep reading the user's own words and the facts clawbot
    gave with them, whatever steps of the turn the summary stands for."""
    asked = next((i for i in range(len(body) - 1, -1, -1) if body[i].role == Role.USER and speaker(body[i]).kind != "event"), None)
    if asked is None or asked >= start:
        return body[start:]
    return [body[asked], *body[start:]]


def _rough(messages: list[Message]) -> int:
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
        caller = conversation.model_caller(chain)
        compactor = Compactor.for_turn(conversation, session_key, session, chain, caller)
        outcome = await compactor.compact(messages, "manual", instructions)
    return outcome.text
