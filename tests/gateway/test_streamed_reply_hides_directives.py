"""A reply shown live never shows a directive, however it is cut into pieces.

The live reader (:class:`clawbot.gateway.live.LiveTurn`) is fed the reply in deltas; what
the channel is shown must never contain a reply tag, a MEDIA line, HEARTBEAT_OK or a silent
reply, must always be the start of what is finally sent, and once the turn is over must be
all of it.
"""

from __future__ import annotations

import asyncio
import re

from clawbot.gateway.live import LiveTurn
from clawbot.gateway.reply_protocol import parse_reply
from clawbot.safetext import visible
from clawbot.types import TextDelta
from hypothesis import given, settings
from hypothesis import strategies as st

FORBIDDEN = re.compile(r"\[\[\s*(reply_to|audio_as_voice)|HEARTBEAT_OK|^[ \t]*MEDIA:", re.MULTILINE | re.IGNORECASE)

REPLIES = [
    "[[reply_to_current]] Hello there",
    "Hello [[reply_to:1234]] there",
    "Here it is:\nMEDIA:out/chart.png\nEnjoy",
    "MEDIA:a.png\n[[audio_as_voice]]",
    "HEARTBEAT_OK",
    "**HEARTBEAT_OK**",
    "HEARTBEAT_OK all quiet",
    "All quiet. HEARTBEAT_OK",
    "HEARTBEAT_OK\n" + "report " * 60,
    "NO_REPLY",
    "__SILENT__",
    "[[silent]]",
    "  NO_REPLY  ",
    "[[reply_to_current]] NO_REPLY",
    "Note: the tag [[reply_to_current]] is gone\nMEDIA: https://example.com/x.png\n",
]
SILENT = {"HEARTBEAT_OK", "**HEARTBEAT_OK**", "HEARTBEAT_OK all quiet", "NO_REPLY", "__SILENT__", "[[silent]]", "  NO_REPLY  ", "[[reply_to_current]] NO_REPLY"}


def _shown(pieces: list[str]) -> tuple[list[str], str]:
    """What the channel is shown, delta by delta, and the reply finally sent."""
    shown: list[str] = []

    async def sink(activity) -> None:
        assert isinstance(activity, TextDelta)
        shown.append(activity.text)

    async def run() -> None:
        live = LiveTurn(sink, "fake")
        so_far = []
        for piece in pieces:
            await live.text(piece)
            so_far.append("".join(shown))
        await live.finish("".join(pieces))
        return so_far

    so_far = asyncio.run(run())
    return so_far, "".join(shown)


def _check(reply: str, pieces: list[str]) -> None:
    so_far, whole = _shown(pieces)
    parsed = parse_reply(reply)
    final = visible(parsed.text.strip()) if parsed.delivered else ""
    for shown in so_far:
        assert not FORBIDDEN.search(shown), (pieces, shown)
        assert final.startswith(shown) or not parsed.delivered, (pieces, shown, final)
    if reply in SILENT:
        assert whole == "", pieces
    elif parsed.delivered:
        assert whole == final, pieces


def test_a_reply_cut_anywhere_never_shows_a_directive() -> None:
    for reply in REPLIES:
        for cut in range(len(reply) + 1):
            _check(reply, [reply[:cut], reply[cut:]])
        _check(reply, list(reply))  # one character at a time


WORDS = st.sampled_from(
    [
        "Hello",
        "world.",
        " ",
        "\n",
        "\n\n",
        "[[reply_to_current]]",
        "[[reply_to:77]]",
        "[[audio_as_voice]]",
        "MEDIA:a.png\n",
        "\nMEDIA: https://x.y/z.png\n",
        "HEARTBEAT_OK",
        "**HEARTBEAT_OK**",
        "[",
        "]]",
        "HEART",
        "MEDIA",
        "ok",
        "NO_REPLY",
    ]
)


@settings(max_examples=300, deadline=None)
@given(words=st.lists(WORDS, max_size=14), cuts=st.lists(st.integers(min_value=0, max_value=200), max_size=6))
def test_any_reply_in_any_pieces_never_shows_a_directive(words, cuts) -> None:
    reply = "".join(words)
    bounds = sorted({min(c, len(reply)) for c in cuts} | {0, len(reply)})
    _check(reply, [reply[a:b] for a, b in zip(bounds, bounds[1:], strict=False)] or [""])
