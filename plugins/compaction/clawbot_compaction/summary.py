"""Strategy ``summary`` (the default): the older part summarised by the session's model.

The newest ``keep_recent_tokens`` stay word for word. The rest goes to the model as a
compact transcript, in several parts when it would not fit one call (each part's summary
carried into the next). Identifiers found in the old part that the model's summary lacks
are appended to it, each under who or what wrote it, so none is lost and none changes
author. The model's own text never carries the owner's tag: only clawbot writes that. A
model that fails or answers nothing is asked once more; after that the history is trimmed
without it, and the result says why: an empty or broken summary is never returned.
"""

from __future__ import annotations

from collections.abc import Sequence

from clawbot.tokens import chars_for_tokens
from clawbot.types import CompactionRequest, CompactionResult, CompactionStrategy, Message, ProviderError, SummaryCall

from clawbot_compaction.history import compacted, kept_budget, render, shown, split_index
from clawbot_compaction.kept import left_out, listing, sources
from clawbot_compaction.prompts import SYSTEM, frame_chars, summary_prompt
from clawbot_compaction.trim import trim

# One call reads at most this share of the window, leaving the rest for the answer and for
# the gap between clawbot's estimate and the provider's count
CALL_SHARE = 0.5
# Room kept in every call for the summary of the parts before it, at most this share of it
RUNNING_SUMMARY_TOKENS = 4_000
RUNNING_SUMMARY_SHARE = 0.25
# A part is never smaller than this, whatever the window, so that the work always advances
MIN_PART_CHARS = 2_000
IDENTIFIERS_CHARS = 3_000


class SummaryFailed(Exception):
    """The model gave no usable summary twice; the message says why, for the result's detail."""


class SummaryStrategy(CompactionStrategy):
    """Summarises the older part with the model, keeping the recent part verbatim."""

    name = "summary"

    async def compact(self, request: CompactionRequest) -> CompactionResult:
        messages = request.messages
        start = split_index(messages, kept_budget(request.keep_recent_tokens, request.context_window))
        if start == 0:
            return trim(request, "nothing older than the recent part to summarise", first_kept_index=0)
        if request.summarize is None:
            return trim(request, "no model was available to write a summary; trimmed instead", first_kept_index=start)
        try:
            text, parts = await summarise(request.summarize, messages[:start], request, call_tokens=int(request.context_window * CALL_SHARE))
        except SummaryFailed as failure:
            return trim(request, f"{failure}; trimmed instead", first_kept_index=start)
        dropped = left_out(sources(messages[:start], request.previous_summary), text)
        summary = text + (f"\n\n{listing(dropped, IDENTIFIERS_CHARS)}" if dropped else "")
        detail = f"{start} messages summarised" + (f" in {parts} parts" if parts > 1 else "")
        if dropped:
            detail += f"; {len(dropped)} identifiers the model left out were appended"
        return compacted(request, start, summary, "summary", detail)


def plan_parts(entries: Sequence[str], room_chars: int) -> list[str]:
    """``entries`` packed in order into parts of at most ``room_chars`` characters; an entry
    larger than that is cut into pieces of its own."""
    room = max(MIN_PART_CHARS, room_chars)
    parts: list[str] = []
    current: list[str] = []
    size = 0
    for entry in entries:
        pieces = [entry[i : i + room] for i in range(0, len(entry), room)] or [entry]
        for piece in pieces:
            if current and size + len(piece) + 2 > room:
                parts.append("\n\n".join(current))
                current, size = [], 0
            current.append(piece)
            size += len(piece) + 2
    if current:
        parts.append("\n\n".join(current))
    return parts


async def summarise(summarize: SummaryCall, messages: Sequence[Message], request: CompactionRequest, *, call_tokens: int) -> tuple[str, int]:
    """The model's summary of ``messages`` and the number of calls it took."""
    reserve = chars_for_tokens(min(RUNNING_SUMMARY_TOKENS, int(call_tokens * RUNNING_SUMMARY_SHARE)))
    room = chars_for_tokens(call_tokens) - frame_chars(request.previous_summary, request.instructions) - reserve
    # A message longer than a part goes in pieces, each in its own fence
    parts = plan_parts(render(messages, max_chars=max(MIN_PART_CHARS, room)), room)
    running, text = request.previous_summary, ""
    for number, part in enumerate(parts, start=1):
        # The model's words, whatever it read: it never writes the owner's tag, a raw control
        # character or one of the prompt's labels
        text = shown(await ask(summarize, summary_prompt(part, running, request.instructions, part=number, parts=len(parts))))
        running = text
    return text, len(parts)


def _why(error: BaseException) -> str:
    if isinstance(error, ProviderError):
        return f"{error.kind.replace('_', ' ')} error"
    return type(error).__name__


async def ask(summarize: SummaryCall, prompt: str) -> str:
    """The model's non-empty answer to ``prompt``, asked at most twice."""
    failures: list[str] = []
    for _ in range(2):
        try:
            text = (await summarize(SYSTEM, prompt) or "").strip()
        except Exception as error:  # a summary failure must never end the session: it trims instead
            failures.append(_why(error))
            continue
        if text:
            return text
        failures.append("an empty reply")
    reasons = list(dict.fromkeys(failures))
    raise SummaryFailed(f"the model failed twice ({', then '.join(reasons)})")


__all__ = ["SummaryFailed", "SummaryStrategy", "ask", "plan_parts", "summarise"]
