"""A turn's activity on its way to a channel that shows it live (:meth:`Channel.live`).

The reply's text is made safe piece by piece exactly as the whole reply would be
(:class:`clawbot.safetext.SafeStream` with the notice mark: a mark split across two deltas
is broken up too), and each tool call becomes one line's worth of name and arguments, made
visible and inert. The text is read as :mod:`clawbot.gateway.reply_protocol` reads the
final reply, so what is shown is always the start of what will be sent: a silent token
(``NO_REPLY``), ``HEARTBEAT_OK``, reply tags and ``MEDIA:`` lines are never shown, text
that could still become one is held back until it cannot. A channel whose sink raises is
left alone for the rest of the turn; it still gets the final reply in full.
"""

from __future__ import annotations

import functools
import inspect
import json
import logging
from collections.abc import Callable

from clawbot.agent.notices import MARKS, quoted_line
from clawbot.gateway.reply_protocol import HEARTBEAT_ACK_MAX_CHARS, ReplyReader
from clawbot.kernel import Kernel
from clawbot.safetext import SafeStream
from clawbot.types import Activity, ActivitySink, Channel, InboundMessage, TextDelta, ToolCallBlock, ToolCallStarted, TurnFailed

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


class LiveTurn:
    """Feeds one turn's text and tool calls to a channel's :data:`ActivitySink`."""

    def __init__(self, sink: ActivitySink, channel: str, ack_max_chars: int = HEARTBEAT_ACK_MAX_CHARS, *, heartbeat: bool = False) -> None:
        self._sink: ActivitySink | None = sink
        self._channel = channel
        self._stream = SafeStream(MARKS)
        self._segment: list[str] = []  # the text since the last tool call: the reply, if the turn ends now
        self._ack, self._heartbeat = ack_max_chars, heartbeat
        self._reader = ReplyReader(ack_max_chars, heartbeat=heartbeat)
        self._shown = ""  # what of the segment has been shown (before making it safe)
        self.showed_reply = False
        """Whether some of the final reply has been shown (it cannot be taken back)."""

    async def text(self, delta: str) -> None:
        """A :data:`~clawbot.types.TextSink` for the model calls of the turn."""
        self._segment.append(delta)
        self._reader.feed(delta)
        await self._show(self._reader.shown())

    async def tool_calls(self, calls: tuple[ToolCallBlock, ...]) -> None:
        """The model's reply asks for ``calls``: what it wrote before them is complete."""
        await self._end_segment()
        for call in calls:
            await self._emit(ToolCallStarted(quoted_line(call.name), call_summary(call), call.id))

    async def failed(self, text: str) -> None:
        """The turn ended in an error; ``text`` is what the chat is told."""
        await self._end_segment()
        await self._emit(TurnFailed(text))

    async def finish(self, reply: str | None) -> bool:
        """The turn is over with ``reply``: whether the channel has already shown it all."""
        segment = "".join(self._segment)
        self.showed_reply = await self._end_segment()
        return self._sink is not None and bool(reply) and segment == reply

    async def _show(self, shown: str) -> None:
        """Show what ``shown`` (what may be shown of the segment now) adds to what was."""
        if len(shown) > len(self._shown) and shown.startswith(self._shown):
            added, self._shown = shown[len(self._shown) :], shown
            await self._emit_text(self._stream.feed(added))

    async def _end_segment(self) -> bool:
        """Show the rest of the segment as it will be sent; whether any of it was shown."""
        parsed = self._reader.result()
        if parsed.delivered or self._shown:
            await self._show(parsed.text.strip())
        await self._emit_text(self._stream.flush())
        showed = bool(self._shown)
        self._stream = SafeStream(MARKS)
        self._segment, self._reader, self._shown = [], ReplyReader(self._ack, heartbeat=self._heartbeat), ""
        return showed

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


def live_turn(kernel: Kernel, channel: Channel, message: InboundMessage, *, reports: bool, heartbeat: bool = False) -> LiveTurn | None:
    """The turn's live activity for a channel that shows it and a responder that ``reports``
    it. Not while a plugin implements ``clawbot_message_sending``: it may cancel or rewrite
    the reply, which it can only do before the channel shows any of it."""
    if not reports or kernel.plugins.impls("clawbot_message_sending"):
        return None
    try:
        sink = channel.live(message)
    except Exception:
        log.exception("channel %s failed to offer live activity", channel.name)
        return None
    return None if sink is None else LiveTurn(sink, channel.name, kernel.config.agents.defaults.heartbeat.ack_max_chars, heartbeat=heartbeat)


def responder_takes(respond: Callable[..., object], keyword: str) -> bool:
    """Whether the gateway's responder takes ``keyword`` (``live``: it reports the turn's
    activity; ``earlier``: it answers the messages that waited with the last one, each kept
    apart)."""
    try:
        return _takes(respond, keyword)
    except TypeError:  # an unhashable responder: asked each time
        return _takes.__wrapped__(respond, keyword)


@functools.lru_cache(maxsize=64)  # asked on every turn; a responder's signature never changes
def _takes(respond: Callable[..., object], keyword: str) -> bool:
    try:
        return keyword in inspect.signature(respond).parameters
    except (TypeError, ValueError):  # a callable without a signature
        return False
