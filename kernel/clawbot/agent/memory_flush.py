"""The silent turn that stores durable notes before a compaction summarises them away.

Before a user's message is handled, the request it would make is estimated
(the calibrated estimate of :mod:`clawbot.agent.token_budget`); once it reaches
``window - reserve_tokens_floor - memory_flush.soft_threshold_tokens``, one turn runs first:
clawbot's system event asks the agent (its normal tools, the flush instructions added to the
volatile end of the system prompt for that turn alone, so the cached prefix is untouched) to
write lasting notes to ``memory/<today>.md``. Nothing of it reaches the chat: no streamed
text, no reply (``NO_REPLY`` or anything else), no notices. Its messages stay in the
transcript, labelled as clawbot's, because they happened and the next compaction should
summarise them.

Once per compaction cycle: a ``custom`` entry of kind ``memory_flush`` after the last
compaction says the flush was done, and loading a transcript starts at its last compaction,
so the next cycle starts without one. The entry is written whatever the outcome, a failure
included: a flush that failed is logged and never stops, nor repeats on every later turn
of, the user's conversation.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import TYPE_CHECKING

import attrs

from clawbot.agent.clock import local_date, user_timezone
from clawbot.agent.compaction import strategy_for
from clawbot.agent.token_budget import ContextLimits, TokenBudget, TokenCalibrations
from clawbot.agent.truncation import fit_tool_results
from clawbot.agent.user_turns import as_sent, user_message
from clawbot.types import InboundMessage, Message, ModelRequest, Role, SystemPrompt, TextBlock, ToolSpec

if TYPE_CHECKING:
    from clawbot.agent.conversation import Conversation
    from clawbot.sessions.store import Session
    from clawbot.sessions.transcript import Entry

log = logging.getLogger(__name__)

KIND = "memory_flush"
DATE_PLACEHOLDER = "YYYY-MM-DD"
SILENT_REPLY = "NO_REPLY"


def flushed_this_cycle(entries: Iterable[Entry]) -> bool:
    """Whether a flush entry follows the last compaction entry."""
    done = False
    for entry in entries:
        if entry.type == "compaction":
            done = False
        elif entry.type == "custom" and entry.data.get("kind") == KIND:
            done = True
    return done


def flush_message(prompt: str, date: str) -> Message:
    """The flush prompt, today's date written in, as clawbot's system event: labelled as
    clawbot's wherever it is shown (the request, the history, a summariser's input)."""
    return Message(Role.USER, (TextBlock(prompt.replace(DATE_PLACEHOLDER, date)),), meta={"system_event": True})


def with_note(system: SystemPrompt, note: str) -> SystemPrompt:
    """``system`` with ``note`` after its cache boundary (the cached prefix stays the same)."""
    if not note.strip():
        return system
    return attrs.evolve(system, volatile=f"{system.volatile}\n\n{note}" if system.volatile else note)


async def flush_if_due(
    conversation: Conversation,
    session: Session,
    session_key: str,
    text: str | Message,
    channel: str | None,
    origin: InboundMessage | None,
) -> SystemPrompt | None:
    """Before a user's message: run the flush turn when it is due. Returns the system prompt
    already built for the user's turn when nothing ran (``None``: build it again, the flush
    may have changed files)."""
    kernel = conversation.kernel
    compaction = kernel.config.agents.defaults.compaction
    if not compaction.memory_flush.enabled or strategy_for(kernel, conversation.agent_id) is None:
        return None  # nothing will summarise the history away: nothing to save from it
    loaded = session.loaded or session.transcript.load()
    session.loaded = loaded
    history = loaded.messages()
    if not history or flushed_this_cycle(loaded.entries):
        return None
    model = conversation.models_for(session.info)[0]
    window = model.info().context_window
    threshold = ContextLimits.of(window, compaction).flush_at
    zone = user_timezone(kernel.config.agents.defaults.timezone)[0]
    system = await conversation.system_prompt(session_key, channel, model)
    specs = tuple(ToolSpec(t.name, t.description, t.parameters) for t in conversation.tools.values())
    owners = kernel.config.agents.defaults.owner_ids
    upcoming = as_sent([*history, user_message(text, origin, zone=zone, owner_ids=owners)])
    budget = TokenBudget(TokenCalibrations(kernel.paths.root), model.ref)
    tokens = budget.estimate(ModelRequest(model.model, system, tuple(fit_tool_results(upcoming, window)), specs))
    if tokens < threshold:
        return system
    await _run(conversation, session, session_key, channel, system, tokens, threshold)
    return None


async def flush_during_turn(
    conversation: Conversation, session: Session, session_key: str, channel: str | None, system: SystemPrompt, tokens: int, threshold: int
) -> list[Message] | None:
    """Within a turn (tool results grew the history past the flush threshold): run the flush
    turn unless this cycle had one. Returns the history with it (``None``: nothing ran)."""
    if not conversation.kernel.config.agents.defaults.compaction.memory_flush.enabled:
        return None
    if flushed_this_cycle(session.transcript.load().entries):
        return None
    session.loaded = None  # the flush reads the history as the transcript holds it now
    await _run(conversation, session, session_key, channel, system, tokens, threshold)
    return session.transcript.load().messages()


async def _run(conversation: Conversation, session: Session, session_key: str, channel: str | None, system: SystemPrompt, tokens: int, threshold: int) -> None:
    """The flush turn and its ``memory_flush`` entry, whatever the outcome."""
    kernel = conversation.kernel
    settings = kernel.config.agents.defaults.compaction.memory_flush
    zone = user_timezone(kernel.config.agents.defaults.timezone)[0]
    date = local_date(conversation.clock(), zone)
    outcome = "stored"  # it called tools (to write its notes); "nothing": NO_REPLY alone
    try:
        # No text sink, no origin: nothing of this turn is streamed or reported to the chat.
        # It does not compact: it must read what the compaction would summarise away.
        flush_system = with_note(system, settings.system_prompt)
        result = await conversation._loop(
            session, session_key, flush_message(settings.prompt, date), channel, None, None, None, system=flush_system, compaction=False
        )
        if not result.tool_calls:
            outcome = "nothing" if result.text.strip() == SILENT_REPLY else "replied"
        kernel.sessions.record_turn(
            session_key,
            usage=result.usage,
            model=result.model,
            auth_profile=result.auth_profile,
            cost_usd=result.cost_usd,
            session_id=session.info.session_id,
            thinking=result.thinking,
            transcript=session.transcript,
            system_event=True,  # clawbot's own turn: the idle clock counts the user's
        )
    except Exception as error:  # the user's turn goes on whatever happened here
        outcome = "failed"
        log.warning("the memory flush of %s failed (%s): %s", session_key, type(error).__name__, error)
    session.transcript.append("custom", kind=KIND, tokens=tokens, threshold=threshold, date=date, outcome=outcome)
    session.loaded = None  # the user's turn reads the history with the flush turn in it
