"""A turn's activity on its way to a channel that shows it live (:meth:`Channel.live`).

The reply's text is made safe piece by piece exactly as the whole reply would be
(:class:`clawbot.safetext.SafeStream` with the notice mark: a mark split across two deltas
is broken up too), and each tool call becomes one line's worth of name and arguments, made
visible and inert. A reply that is only a silent token (``NO_REPLY``) is never shown: text
that could still become one is held back until it cannot. A channel whose sink raises is
left alone for the rest of the turn; it still gets the final reply in full.
"""

from __future__ import annotations

import json
import logging

from clawbot.agent.notices import MARKS, quoted_line
from clawbot.agent.replies import SILENT_TOKENS, is_silent
from clawbot.safetext import SafeStream
from clawbot.types import Activity, ActivitySink, TextDelta, ToolCallBlock, ToolCallStarted

log = logging.getLogger(__name__)

SUMMARY_WIDTH = 80


def call_summary(call: ToolCallBlock, width: int = SUMMARY_WIDTH) -> str:
    """A tool call's arguments on one line (``command="ls -la", timeout=30``), shortened."""
    if call.raw_arguments is not None:
        text = call.raw_arguments[: width * 4]
    else:
        # Each value is cut before it is encoded: a 1 MB file's content must not be copied whole.
        text = ", ".join(f"{key}={_short_json(value, width * 4)}" for key, value in call.arguments.items())
    shown = quoted_line(text[: width * 4])
    return shown if len(shown) <= width else shown[: width - 1] + "\u2026"


def _short_json(value: object, limit: int) -> str:
    if isinstance(value, str):
        value = value[:limit]
    try:
        return json.dumps(value, ensure_ascii=False, default=str)[:limit]
    except (TypeError, ValueError, RecursionError):
        return str(value)[:limit]


def _may_become_silent(text: str) -> bool:
    stripped = text.strip()
    return any(token.startswith(stripped) for token in SILENT_TOKENS)


class LiveTurn:
    """Feeds one turn's text and tool calls to a channel's :data:`ActivitySink`."""

    def __init__(self, sink: ActivitySink, channel: str) -> None:
        self._sink: ActivitySink | None = sink
        self._channel = channel
        self._stream = SafeStream(MARKS)
        self._segment: list[str] = []  # the text since the last tool call: the reply, if the turn ends now
        self._released = False  # the segment can no longer be a silent token: it is being shown

    async def text(self, delta: str) -> None:
        """A :data:`~clawbot.types.TextSink` for the model calls of the turn."""
        self._segment.append(delta)
        if not self._released:
            held = "".join(self._segment)
            if _may_become_silent(held):
                return
            self._released, delta = True, held
        await self._emit_text(self._stream.feed(delta))

    async def tool_calls(self, calls: tuple[ToolCallBlock, ...]) -> None:
        """The model's reply asks for ``calls``: what it wrote before them is complete."""
        await self._end_segment()
        for call in calls:
            await self._emit(ToolCallStarted(quoted_line(call.name), call_summary(call), call.id))

    async def finish(self, reply: str | None) -> bool:
        """The turn is over with ``reply``: whether the channel has already shown it all."""
        segment = "".join(self._segment)
        await self._end_segment()
        return self._sink is not None and bool(reply) and segment == reply

    async def _end_segment(self) -> None:
        segment = "".join(self._segment)
        if not self._released and segment.strip() and not is_silent(segment):
            await self._emit_text(self._stream.feed(segment))  # began like a silent token, but was not one
        await self._emit_text(self._stream.flush())
        self._stream = SafeStream(MARKS)
        self._segment, self._released = [], False

    async def _emit_text(self, text: str) -> None:
        if text:
            await self._emit(TextDelta(text))

    async def _emit(self, activity: Activity) -> None:
        if self._sink is None:
            return
        try:
            await self._sink(activity)
        except Exception:
            log.exception("channel %s failed to show a turn live; it gets the final reply only", self._channel)
            self._sink = None
