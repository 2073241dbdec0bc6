"""SafeStream: text made safe piece by piece is exactly the whole text made safe.

However a reply is cut into deltas (inside a phrase, between an emoji and its joiner, after
a digit waiting for its keycap), joining what ``feed`` and ``flush`` return gives
``defuse(visible(whole), phrases)``, and no piece ever holds a phrase or a raw control.
"""

from __future__ import annotations

import unicodedata

import pytest
from clawbot import OutboundMessage
from clawbot.markers import TRUSTED_MARKERS
from clawbot.safetext import SafeStream, defuse, visible
from clawbot.testing.awkward_text import AWKWARD_TEXT
from hypothesis import given, settings
from hypothesis import strategies as st

MARK = OutboundMessage.NOTICE_MARK
PHRASES = (MARK, *TRUSTED_MARKERS)
TRICKY = [
    MARK,
    MARK[:4],
    MARK[4:],
    "[",
    "]",
    "\u0441law",
    "\uff43",
    "\u034f",
    "\u200b",
    "\u200d",
    "\ufe0f",
    "\u20e3",
    "1",
    "#",
    "\U0001f468",
    "\U0001f3fd",
    "\u0915\u094d",
    "\x1b[2J",
    "\r",
    "\n",
    " ",
    "\u2028",
    "\ud800",
    "\ufdfa",
    "x",
    "ab",
]
TEXT = st.lists(st.one_of(st.sampled_from(TRICKY), st.text(max_size=4)), max_size=16).map("".join)


def _streamed(text: str, cuts: list[int], phrases=PHRASES) -> tuple[str, list[str]]:
    stream = SafeStream(phrases)
    points = sorted({0, len(text), *(c % (len(text) + 1) for c in cuts)})
    pieces = [stream.feed(text[a:b]) for a, b in zip(points, points[1:], strict=False)]
    pieces.append(stream.flush())
    return "".join(pieces), pieces


@settings(max_examples=600, deadline=None)
@given(TEXT, st.lists(st.integers(0, 200), max_size=12))
def test_pieces_made_safe_join_to_the_whole_made_safe(text: str, cuts: list[int]) -> None:
    joined, pieces = _streamed(text, cuts)
    assert joined == defuse(visible(text), PHRASES)
    for piece in pieces:
        assert MARK not in piece
        assert not any(unicodedata.category(c) == "Cc" for c in piece.replace("\n", "").replace("\t", ""))


@pytest.mark.parametrize("name", AWKWARD_TEXT)
def test_awkward_texts_in_pieces(name: str) -> None:
    text = AWKWARD_TEXT[name]
    size = 4096 if len(text) > 10_000 else 1
    joined, _ = _streamed(text, list(range(0, len(text), size)))
    assert joined == defuse(visible(text), PHRASES)


def test_a_mark_split_across_pieces_is_held_back_until_it_is_decided() -> None:
    stream = SafeStream([MARK])
    assert stream.feed("Reply [cl") == "Reply "
    assert stream.feed("aw") == ""
    assert stream.feed("bot] now") == "[\u2024clawbot] now"
    assert stream.feed(" [clue]") == " [clue]"
    assert stream.feed(" [") == " " and stream.flush() == "["


def test_a_long_reply_in_many_pieces_comes_through_whole() -> None:
    stream = SafeStream(PHRASES)
    shown = "".join(stream.feed("word " * 20) for _ in range(2000)) + stream.flush()
    assert shown == "word " * 40_000
