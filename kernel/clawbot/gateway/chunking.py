"""Long replies sent as several messages, each within the channel's length limit.

A reply longer than :attr:`ChannelCapabilities.max_text_length` is cut at the last
paragraph break that fits, else the last line break, else after a sentence, else at a space,
and only as a last resort in the middle of a word. A cut never leaves a code fence open:
where a fenced block must be split, the piece ends by closing the fence and the next one
reopens it with the same marker and language, and both fence lines count towards the
limit. Only the whitespace at a cut is dropped, so the pieces read back as the reply.

The first piece answers (``reply_to_id``) the message being answered; the attachments (and
``audio_as_voice``) go with the last piece, after the text that introduces them.
"""

from __future__ import annotations

import bisect
import re

import attrs

from clawbot.gateway.reply_protocol import fence_opener
from clawbot.types import OutboundMessage

_SENTENCE_END = re.compile(r"[.!?\u3002\uff01\uff1f][\"')\]]*( +)")
_SPACES = re.compile(r"[ \t]+")
_PARAGRAPH = re.compile(r"\n[ \t]*\n(?:[ \t]*\n)*")


@attrs.frozen
class _Line:
    start: int
    end: int  # the offset of its line break (or of the end of the text)
    before: tuple[str, str] | None  # the fence open at its start: (marker, opening line)
    after: tuple[str, str] | None  # the fence open after it
    delimiter: bool  # it opens or closes a fence


def _lines(text: str, fence: tuple[str, str] | None) -> list[_Line]:
    lines = []
    start = 0
    for raw in text.split("\n"):
        end = start + len(raw)
        before = fence
        if fence is None:
            marker = fence_opener(raw)
            if marker is not None:
                fence = (marker, raw.rstrip("\r"))
        else:
            stripped = raw.strip(" \t\r")
            marker = fence[0]
            if len(stripped) >= len(marker) and stripped == marker[0] * len(stripped) and len(raw) - len(raw.lstrip(" ")) <= 3:
                fence = None
        lines.append(_Line(start, end, before, fence, before != fence))
        start = end + 1
    return lines


def chunk_text(text: str, limit: int) -> list[str]:
    """``text`` in pieces of at most ``limit`` characters (``0``: no limit)."""
    if limit <= 0 or len(text) <= limit:
        return [text]
    pieces: list[str] = []
    fence: tuple[str, str] | None = None
    rest = text
    while rest:
        head = f"{fence[1]}\n" if fence is not None else ""
        if len(head) + len(rest) <= limit:
            pieces.append(head + rest)
            break
        cut, skip, fence = _best_cut(rest, limit, len(head), fence)
        pieces.append(head + rest[:cut] + (f"\n{fence[0]}" if fence is not None else ""))
        rest = rest[cut + skip :]
    return [piece for piece in pieces if piece.strip()] or [text[:limit]]


def _best_cut(rest: str, limit: int, used: int, fence: tuple[str, str] | None) -> tuple[int, int, tuple[str, str] | None]:
    """Where to cut ``rest`` for a piece of at most ``limit`` characters, ``used`` of them
    taken already (a reopened fence): (cut offset, whitespace dropped there, the fence to
    close and reopen there or ``None``)."""
    budget = limit - used
    lines = _lines(rest, fence)
    starts = [line.start for line in lines]

    def state(cut: int) -> tuple[bool, tuple[str, str] | None]:
        """Whether a piece may end at ``cut``, and the fence open there."""
        line = lines[bisect.bisect_right(starts, cut) - 1]
        if line.delimiter and line.start < cut < line.end:
            return False, None  # never inside a fence's own line
        return True, line.after if cut == line.end and cut > line.start else line.before

    def block_left_blank(cut: int) -> bool:
        """Only blank lines remain of the open block after ``cut``: the next piece would be
        an empty code block."""
        closing = next((line.start for line in lines if line.start >= cut and line.delimiter), len(rest))
        return not rest[cut:closing].strip()

    def fits(cut: int) -> tuple[bool, tuple[str, str] | None]:
        ok, open_fence = state(cut)
        if open_fence is None:
            return ok and 0 < cut <= budget, None
        if block_left_blank(cut):
            return False, open_fence
        closing = len(open_fence[0]) + 1
        reopened = len(open_fence[1]) + 1
        # the next piece must have room for its fence lines and some of the block
        return ok and 0 < cut and cut + closing <= budget and reopened + closing < limit, open_fence

    def outside(cut: int) -> bool:
        return state(cut)[1] is None

    paragraph = [(m.start(), m.end() - m.start()) for m in _PARAGRAPH.finditer(rest, 0, budget + 2)]
    line_breaks = [(line.end, 1) for line in lines if line.end < len(rest) and line.end <= budget]
    sentences = [(m.start(1), len(m.group(1))) for m in _SENTENCE_END.finditer(rest, 0, budget + 1)]
    spaces = [(m.start(), len(m.group())) for m in _SPACES.finditer(rest, 0, budget + 1)]
    levels = [
        [c for c in paragraph if outside(c[0])],
        [c for c in line_breaks if outside(c[0])],
        line_breaks,
        [c for c in sentences if outside(c[0])],
        [c for c in spaces if outside(c[0])],
    ]
    for candidates in levels:
        for cut, skip in reversed(candidates):
            ok, open_fence = fits(cut)
            if ok:
                return cut, skip, open_fence
    for cut in range(min(budget, len(rest) - 1), 0, -1):  # mid-word, as late as fits
        if 0xDC00 <= ord(rest[cut]) <= 0xDFFF:
            continue  # not between the halves of a surrogate pair
        ok, open_fence = fits(cut)
        if ok:
            return cut, 0, open_fence
    return max(budget, 1), 0, None  # a limit too small for any fence: cut anyway


def split_message(message: OutboundMessage, limit: int) -> list[OutboundMessage]:
    """``message`` as the messages a channel with ``limit`` sends: see the module."""
    texts = chunk_text(message.text, limit)
    if len(texts) == 1:
        return [message]
    last = len(texts) - 1
    return [
        attrs.evolve(
            message,
            text=text,
            reply_to_id=message.reply_to_id if index == 0 else None,
            media=message.media if index == last else (),
            audio_as_voice=message.audio_as_voice if index == last else False,
        )
        for index, text in enumerate(texts)
    ]
