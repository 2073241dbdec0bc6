"""The pre-compaction memory flush: a silent exchange that stores durable notes before a
compaction summarises them away.

The kernel calls ``clawbot_compaction_near`` the first time in a turn the next request passes
``soft_threshold_tokens`` below the compaction line (``agents.defaults.compaction.memory_flush``).
Then the agent gets the flush prompt as clawbot's system event, beside the turn: a copy of
the turn's history plus the prompt, the flush instructions after the system prompt's cache
boundary, the agent's tools, so it writes ``memory/<today>.md``, the daily notes this plugin
indexes. Nothing of that exchange joins the history or reaches the chat (no streamed text,
no reply, ``NO_REPLY`` or anything else): the turn goes on from its own messages. Its usage
counts in the turn's.

Once per compaction cycle: a ``custom`` entry of kind ``memory_flush`` after the last
compaction says the flush was done, so the next cycle starts without one. The entry is
written whatever the outcome, a failure included: a flush that failed is logged and never
stops, nor repeats on every later turn of, the user's conversation.

Memory feeds the owner's turns (MEMORY.md is in the main session's prompt, ``memory_search``
finds the daily notes), so the flush runs only where the history is the owner's word alone
(``event.owner_only``: an owner's turn, not a group's session, nothing anyone else wrote,
no summary of a part they wrote in). Elsewhere it does not run at all (the turn's tools
could not write the workspace anyway) and leaves no entry, so an owner's later turn of that
session is not counted as flushed.
"""

from __future__ import annotations

import logging

from clawbot.promptkit import is_silent
from clawbot.types import CompactionNearEvent, Message, Role, TextBlock, Usage

log = logging.getLogger(__name__)

KIND = "memory_flush"
DATE_PLACEHOLDER = "YYYY-MM-DD"
MAX_STEPS = 5  # model calls of one flush: write, perhaps read first, then the silent reply


def flush_message(prompt: str, date: str) -> Message:
    """The flush prompt, today's date written in, as clawbot's system event: labelled as
    clawbot's wherever it is shown (the request, the history, a summariser's input)."""
    return Message(Role.USER, (TextBlock(prompt.replace(DATE_PLACEHOLDER, date)),), meta={"system_event": True})


async def flush_before_compaction(event: CompactionNearEvent) -> Usage | None:
    """Run the flush on a copy of the turn's history unless it is off, this cycle had one,
    or the notes would not be the owner's alone: its usage (``None``: nothing ran)."""
    settings = event.clawbot.memory_flush
    if not settings.enabled or event.recorded_this_cycle(KIND):
        return None
    if not event.owner_only:
        log.info("no memory flush in %s: someone other than the owner wrote in this turn or its history", event.session_key)
        return None
    history = [*event.messages, flush_message(settings.prompt, event.today)]
    usage, outcome = Usage(), "nothing"  # "stored": it called tools; "replied": it wrote text instead
    try:
        for _ in range(MAX_STEPS):
            reply = await event.ask(history, settings.system_prompt)
            usage = usage + (reply.usage or Usage())
            history.append(reply)
            if not reply.tool_calls:
                if outcome == "nothing" and not is_silent(reply.text):
                    outcome = "replied"
                break
            outcome = "stored"
            await event.run_tools(reply, history)
    except Exception as error:  # the user's turn goes on whatever happened here
        outcome = "failed"
        log.warning("the memory flush of %s failed (%s): %s", event.session_key, type(error).__name__, error)
    event.record(KIND, tokens=event.tokens, threshold=event.threshold, date=event.today, outcome=outcome)
    return usage
