"""Sizing a history, choosing where the verbatim part starts, and writing the older part
as the compact transcript a summarising model reads."""

from __future__ import annotations

import json
from collections.abc import Sequence

from clawbot.tokens import estimate_tokens
from clawbot.types import ImageBlock, Message, Role, TextBlock, ThinkingBlock, ToolCallBlock

# A tool result in the transcript given to the model: its start and its end, which is where
# commands print their summary and errors
RESULT_HEAD_CHARS = 1_200
RESULT_TAIL_CHARS = 800
ARGUMENTS_CHARS = 600


def message_chars(message: Message) -> int:
    """Characters a message costs in a request: its text, tool calls and thinking."""
    size = 0
    for block in message.content:
        if isinstance(block, TextBlock | ThinkingBlock):
            size += len(block.text)
        elif isinstance(block, ToolCallBlock):
            size += len(block.name) + len(block.raw_arguments or json.dumps(block.arguments, ensure_ascii=False))
        elif isinstance(block, ImageBlock):
            size += 1_000  # what an image costs is the provider's business: a fixed share
    return size


def history_tokens(messages: Sequence[Message], summary: str | None = None) -> int:
    """The estimated tokens of a summary followed by messages, as clawbot estimates them."""
    return estimate_tokens(sum(message_chars(m) for m in messages) + len(summary or ""))


def split_index(messages: Sequence[Message], keep_recent_tokens: int) -> int:
    """Where the verbatim part starts: the newest messages holding about ``keep_recent_tokens``.

    The index never points at a tool result, whose call would then be summarised away and
    leave a result no API accepts; it moves back to the call instead. When everything fits,
    the older turns still go (a compaction was asked for): the current turn is kept, or, in a
    single turn, its newest step. 0 means nothing can be summarised.
    """
    if len(messages) < 2:
        return 0
    budget = max(0, keep_recent_tokens)
    start, used = len(messages), 0
    while start > 0:
        cost = estimate_tokens(message_chars(messages[start - 1]))
        if start < len(messages) and used + cost > budget:
            break
        used += cost
        start -= 1
    start = _not_a_result(messages, start)
    if start == 0:
        last_user = max((i for i, m in enumerate(messages) if m.role == Role.USER), default=0)
        start = _not_a_result(messages, last_user or len(messages) - 1)
    return start


def kept_budget(keep_recent_tokens: int, context_window: int) -> int:
    """Tokens the verbatim part may hold: keep_recent_tokens, but never more than half the
    window, so that a small model's history still shrinks."""
    return min(keep_recent_tokens, context_window // 2) if context_window > 0 else keep_recent_tokens


def _not_a_result(messages: Sequence[Message], index: int) -> int:
    """``index`` moved back until the part from it holds every tool call its results answer."""
    called_at = {c.id: i for i, m in enumerate(messages) for c in m.tool_calls}
    while True:
        while 0 < index < len(messages) and messages[index].role == Role.TOOL_RESULT:
            index -= 1
        needed = min((called_at.get(m.tool_call_id or "", index) for m in messages[index:] if m.role == Role.TOOL_RESULT), default=index)
        if needed >= index:
            return index
        index = needed


def _clip(text: str, head: int, tail: int) -> str:
    if len(text) <= head + tail + 80:
        return text
    return f"{text[:head]}\n[... {len(text) - head - tail:,} characters left out ...]\n{text[-tail:]}"


def render_message(message: Message) -> str:
    """One message as the summarising model reads it: who spoke, tool calls as name and
    arguments, tool results cut to their head and tail; thinking is left out."""
    if message.role == Role.TOOL_RESULT:
        label = f"[tool result: {message.tool_name or 'tool'}{', error' if message.is_error else ''}]"
        return f"{label}\n{_clip(message.text, RESULT_HEAD_CHARS, RESULT_TAIL_CHARS)}"
    parts = []
    for block in message.content:
        if isinstance(block, TextBlock) and block.text.strip():
            parts.append(block.text)
        elif isinstance(block, ToolCallBlock):
            arguments = block.raw_arguments or json.dumps(block.arguments, ensure_ascii=False)
            parts.append(f"[tool call: {block.name}] {_clip(arguments, ARGUMENTS_CHARS // 2, ARGUMENTS_CHARS // 2)}")
        elif isinstance(block, ImageBlock):
            parts.append("[image]")
    who = "User" if message.role == Role.USER else "Assistant"
    return f"[{who}]\n" + "\n".join(parts)


def render(messages: Sequence[Message]) -> list[str]:
    """The transcript of ``messages``, one entry per message."""
    return [render_message(m) for m in messages]


__all__ = ["history_tokens", "kept_budget", "message_chars", "render", "render_message", "split_index"]
