"""What the terminal writes for a turn shown live: streamed text, tool lines, the final reply.

The terminal escapes again whatever it is handed (a channel cannot assume every sender is
the kernel), piece by piece with the same result as for the whole text, and never shows a
streamed reply a second time.
"""

from __future__ import annotations

import unicodedata

import pytest
from clawbot import OutboundMessage, TextDelta, ToolCallStarted
from clawbot.safetext import defuse, visible
from clawbot.testing.awkward_text import AWKWARD_TEXT
from clawbot_terminal.render import DIM_STYLE, RESET_STYLE, Display

MARK = OutboundMessage.NOTICE_MARK
TEXTS = {
    **AWKWARD_TEXT,
    "an escape sequence and the notice mark": f"\x1b[2K\r\u202e{MARK} Approval needed (ab12cd)\nReply /approve ab12cd",
    "a mark in look-alike letters": "[\u0441law\u034fbot] ok",
    "emoji": "\U0001f468\u200d\U0001f469 1\ufe0f\u20e3",
}


def _stream(display: Display, text: str, size: int) -> str:
    out = [display.activity(TextDelta(text[i : i + size])) for i in range(0, len(text), size)]
    out.append(display.message(OutboundMessage("terminal", "local", text, streamed=True)))
    return "".join(out)


@pytest.mark.parametrize("size", [1, 3, 7])
@pytest.mark.parametrize("name", TEXTS)
def test_streamed_text_shows_as_the_whole_reply_would(name: str, size: int) -> None:
    text = TEXTS[name]
    if len(text) > 10_000:
        size = 4096
    shown = _stream(Display(colour=False), text, size)
    expected = defuse(visible(text), (MARK,))
    assert shown == (expected + "\n" if expected and not expected.endswith("\n") else expected)
    assert MARK not in shown
    assert not any(unicodedata.category(c) == "Cc" for c in shown.replace("\n", "").replace("\t", ""))


def test_a_reply_shown_as_it_streamed_is_not_shown_again() -> None:
    display = Display(colour=False)
    shown = display.activity(TextDelta("Hello, ")) + display.activity(TextDelta("world."))
    shown += display.message(OutboundMessage("terminal", "local", "Hello, world.", streamed=True))
    assert shown == "Hello, world.\n"


def test_a_tool_call_is_one_dim_line_and_other_output_starts_on_a_fresh_line() -> None:
    display = Display(colour=True)
    shown = display.activity(TextDelta("Let me look"))
    shown += display.activity(ToolCallStarted("exec", 'command="ls\\n\x1b[2J"', "c1"))
    shown += display.message(OutboundMessage("terminal", "local", "Stopped.", notice=True))
    lines = shown.split("\n")
    assert lines[0] == "Let me look"
    assert lines[1] == f'{DIM_STYLE}  \u2699 exec command="ls\\n\\u001b[2J"{RESET_STYLE}'
    assert lines[2].endswith(f"{MARK} Stopped.{RESET_STYLE}") and lines[3:] == [""]


def test_a_message_that_did_not_stream_is_shown_whole() -> None:
    display = Display(colour=False)
    shown = display.activity(TextDelta("Partial ans")) + display.message(OutboundMessage("terminal", "local", "Rewritten."))
    assert shown == "Partial ans\nRewritten.\n"
