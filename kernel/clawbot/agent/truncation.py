"""Fitting tool results into the context window; the transcript always keeps them whole.

The cap depends on the model's window: 16k characters below 100k tokens, 32k from 100k,
64k from 200k, and never more than 30% of the window (at ~4 characters per token). A
result over the cap keeps its head, plus its tail when the tail looks important (errors,
the end of a JSON document, summaries), with a marker saying what was cut.
"""

from __future__ import annotations

import re

import attrs

from clawbot.tokens import chars_for_tokens
from clawbot.types import Message, Role, TextBlock

_IMPORTANT_TAIL = re.compile(
    r"(error|exception|traceback|failed|failure|fatal|warning|summary|total|result|exit code|[}\]]\s*$)",
    re.IGNORECASE,
)


def result_cap(context_window_tokens: int) -> int:
    if context_window_tokens >= 200_000:
        cap = 64_000
    elif context_window_tokens >= 100_000:
        cap = 32_000
    else:
        cap = 16_000
    return min(cap, int(chars_for_tokens(context_window_tokens) * 0.3))


def truncate_text(text: str, cap: int) -> str:
    if len(text) <= cap:
        return text
    omitted_hint = "Narrow the call (an offset/limit, a more specific pattern or path) to see the rest."
    tail_window = text[-max(1, cap // 3) :]
    if _IMPORTANT_TAIL.search(tail_window[-2000:]):
        head, tail = text[: int(cap * 0.7)], text[-int(cap * 0.3) :]
        cut = len(text) - len(head) - len(tail)
        return f"{head}\n\n[... {cut:,} of {len(text):,} characters cut from the middle. {omitted_hint}]\n\n{tail}"
    head = text[:cap]
    return f"{head}\n\n[... {len(text) - cap:,} of {len(text):,} characters cut from the end. {omitted_hint}]"


def fit_tool_results(messages: tuple[Message, ...] | list[Message], context_window_tokens: int) -> tuple[Message, ...]:
    """The messages as the model should see them: long tool results trimmed."""
    cap = result_cap(context_window_tokens)
    out = []
    for message in messages:
        if message.role == Role.TOOL_RESULT and sum(len(b.text) for b in message.content if isinstance(b, TextBlock)) > cap:
            blocks = tuple(TextBlock(truncate_text(b.text, cap)) if isinstance(b, TextBlock) else b for b in message.content)
            message = attrs.evolve(message, content=blocks)
        out.append(message)
    return tuple(out)
