"""The silent exchange that stores durable notes before a compaction summarises them away.

Before each model request of a turn the request is estimated; once it passes the flush line
(:meth:`~clawbot.agent.token_budget.ContextLimits.flush_line`: ``soft_threshold_tokens``
below the compaction line, and well past the size a compaction leaves), once per compaction
cycle and only where a compaction strategy could follow, the agent gets the flush prompt
as clawbot's system event, beside the turn: a copy of the turn's history plus the prompt,
the flush instructions after the system prompt's cache boundary (the cached prefix stays
the same), the agent's tools, so it writes ``memory/<today>.md``. Nothing of that exchange
joins the history or reaches the chat (no streamed text, no reply, ``NO_REPLY`` or anything
else): the turn goes on from its own messages, and the user's request is answered as if
nothing happened. Its usage counts in the turn's.

Once per compaction cycle: a ``custom`` entry of kind ``memory_flush`` after the last
compaction says the flush was done, and loading a transcript starts at its last compaction,
so the next cycle starts without one. The entry is written whatever the outcome, a failure
included: a flush that failed is logged and never stops, nor repeats on every later turn
of, the user's conversation.

Memory feeds the owner's turns (MEMORY.md is in the main session's prompt, ``memory_search``
finds the daily notes), so the flush writes only what the owner's word stands behind: it
runs in an owner's turn (:class:`~clawbot.types.TurnTrust`) of a session that is not a
group's, whose history holds nothing written by anyone else (no message of theirs, no event
a turn of theirs caused, no summary of a part they wrote in). Elsewhere it does not run at
all (the turn's tools could not write the workspace anyway) and leaves no entry, so an
owner's later turn of that session is not counted as flushed.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterable
from typing import TYPE_CHECKING

import attrs

from clawbot.agent.clock import local_date, user_timezone
from clawbot.agent.compaction import OTHERS_WROTE, others_wrote
from clawbot.agent.replies import is_silent
from clawbot.agent.user_turns import is_summary
from clawbot.sessions.keys import session_kind
from clawbot.sessions.store import Session
from clawbot.sessions.transcript import Entry
from clawbot.types import Message, Role, SystemPrompt, TextBlock, TurnTrust, Usage

if TYPE_CHECKING:  # the conversation builds the compactor and the flush with itself: item 6 of issue 23 untangles it
    from clawbot.agent.conversation import Conversation

log = logging.getLogger(__name__)

KIND = "memory_flush"
DATE_PLACEHOLDER = "YYYY-MM-DD"
MAX_STEPS = 5  # model calls of one flush: write, perhaps read first, then the silent reply


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


def owner_only(session_key: str, messages: list[Message], trust: TurnTrust, entries: Iterable[Entry] = ()) -> bool:
    """Whether notes drawn from ``messages`` would carry the owner's word alone: an owner's
    turn, not in a group's session, with no user message in the history from someone else,
    and no summary in it of a part someone else wrote in (``entries``: the transcript's; a
    summary without its compaction entry counts as one: nobody can tell whose words it holds)."""
    if trust is not TurnTrust.OWNER or session_kind(session_key) == "group":
        return False
    summary = next((e for e in reversed(list(entries)) if e.type == "compaction"), None)
    if summary is not None and summary.data.get(OTHERS_WROTE) is not False:
        return False
    if summary is None and any(is_summary(m) for m in messages):
        return False
    return not others_wrote(messages)


@attrs.frozen
class SideTurn:
    """How the flush asks the model and runs its tools beside the turn (the turn's caller,
    profile, pruning and tool context): ``ask(history, note)`` is one model call with
    ``note`` after the system prompt's cache boundary; ``run_tools(reply, history)`` runs the
    reply's calls and appends their results to ``history``."""

    ask: Callable[[list[Message], str], Awaitable[Message]]
    run_tools: Callable[[Message, list[Message]], Awaitable[None]]


async def flush_during_turn(
    conversation: Conversation,
    session: Session,
    session_key: str,
    messages: list[Message],
    tokens: int,
    threshold: int,
    side: SideTurn,
    trust: TurnTrust,
) -> Usage | None:
    """Run the flush on a copy of ``messages`` unless this cycle had one or the notes would
    not be the owner's alone (:func:`owner_only`): its usage (``None``: nothing ran).
    ``messages`` itself is left as it was."""
    kernel = conversation.kernel
    settings = kernel.config.agents.defaults.compaction.memory_flush
    entries = session.transcript.load().entries
    if not settings.enabled or flushed_this_cycle(entries):
        return None
    if not owner_only(session_key, messages, trust, entries):
        log.info("no memory flush in %s: someone other than the owner wrote in this turn or its history", session_key)
        return None
    date = local_date(conversation.clock(), user_timezone(kernel.config.agents.defaults.timezone)[0])
    history = [*messages, flush_message(settings.prompt, date)]
    usage, outcome = Usage(), "nothing"  # "stored": it called tools; "replied": it wrote text instead
    try:
        for _ in range(MAX_STEPS):
            reply = await side.ask(history, settings.system_prompt)
            usage = usage + (reply.usage or Usage())
            history.append(reply)
            if not reply.tool_calls:
                if outcome == "nothing" and not is_silent(reply.text):
                    outcome = "replied"
                break
            outcome = "stored"
            await side.run_tools(reply, history)
    except Exception as error:  # the user's turn goes on whatever happened here
        outcome = "failed"
        log.warning("the memory flush of %s failed (%s): %s", session_key, type(error).__name__, error)
    session.transcript.append("custom", kind=KIND, tokens=tokens, threshold=threshold, date=date, outcome=outcome)
    return usage
