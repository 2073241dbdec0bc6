"""What the terminal shows, as text: replies, notices, a turn's live text and tool calls.

Nothing written here may draw on the user's screen: control characters in whatever arrives
are shown as ``\\uXXXX`` again, even though the kernel already did (a channel cannot assume
every sender is the kernel), and the notice mark is broken up everywhere but in clawbot's
own notices, which carry it on every row, in colour on a terminal (unless ``NO_COLOR``): a
notice line wider than the terminal is cut into rows here, each continued row marked ``┆``,
so the terminal never wraps one and a row never starts with the quoted text's own letters.
Streamed text gets the same through :class:`clawbot.safetext.SafeStream`, so a mark split
across two deltas is caught too. Tool calls show as one dim line each.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable

from clawbot import OutboundMessage, TextDelta, ToolCallStarted
from clawbot.safetext import SafeStream, defuse, visible

# Bold cyan for clawbot's notices, dim for tool calls and the terminal's own hints: a reply
# cannot produce them, its escape sequences are shown as text.
NOTICE_STYLE = "\x1b[1;36m"
DIM_STYLE = "\x1b[2m"
RESET_STYLE = "\x1b[0m"
TOOL_MARK = "\u2699"  # GEAR
MARKS = (OutboundMessage.NOTICE_MARK,)
CONTINUED = "\u2506 "  # DASHED VERTICAL: the rest of a notice line too wide for one row


def styled(text: str, style: str, on: bool) -> str:
    return f"{style}{text}{RESET_STYLE}" if on else text


def _cells(char: str) -> int:
    """Columns ``char`` takes on a terminal (a tab: as many as it may)."""
    if char == "\t":
        return 8
    if unicodedata.combining(char):
        return 0
    return 2 if unicodedata.east_asian_width(char) in "WF" else 1


def rows(line: str, room: int | None) -> list[str]:
    """``line`` cut into rows of at most ``room`` columns, each after the first led by
    :data:`CONTINUED` (``None``: one row, however long)."""
    if room is None:
        return [line]
    out, current, used, limit = [], [], 0, max(1, room)
    for char in line:
        if used + _cells(char) > limit and current:
            out.append("".join(current))
            current, used, limit = [CONTINUED], len(CONTINUED), max(len(CONTINUED) + 1, room)
        current.append(char)
        used += _cells(char)
    out.append("".join(current))
    return out


def render_message(message: OutboundMessage, colour: bool, columns: int | None = None) -> str:
    """``message`` as whole lines: escaped, and a notice marked row by row (cut to ``columns``)."""
    mark = OutboundMessage.NOTICE_MARK
    text = defuse(visible(message.text.rstrip("\n")), MARKS)
    if not message.notice:
        return text + "\n"
    room = None if columns is None else columns - len(mark) - 2  # the mark, a space, one column spare
    shown = [row for line in text.split("\n") for row in rows(line, room)]
    return "".join(styled(f"{mark} {row}", NOTICE_STYLE, colour) + "\n" for row in shown)


def tool_line(event: ToolCallStarted, colour: bool) -> str:
    name = defuse(visible(event.name), MARKS).replace("\n", "\\n")
    summary = defuse(visible(event.summary), MARKS).replace("\n", "\\n")
    return styled(f"  {TOOL_MARK} {name} {summary}".rstrip(), DIM_STYLE, colour) + "\n"


class Display:
    """Turns what the gateway sends into the text to write, keeping track of a line that a
    streaming reply has begun but not ended (everything else starts on a fresh line)."""

    def __init__(self, colour: bool, columns: Callable[[], int | None] = lambda: None) -> None:
        self.colour = colour
        self.columns = columns
        self._stream = SafeStream(MARKS)
        self._mid_line = False

    def activity(self, event: TextDelta | ToolCallStarted) -> str:
        if isinstance(event, TextDelta):
            return self._text(self._stream.feed(event.text))
        if isinstance(event, ToolCallStarted):
            return self.end_text() + tool_line(event, self.colour)
        return ""

    def message(self, message: OutboundMessage) -> str:
        """A message from the gateway; a streamed reply only ends the line it streamed."""
        ended = self.end_text()
        return ended if message.streamed else ended + render_message(message, self.colour, self.columns())

    def note(self, text: str) -> str:
        """One of the terminal's own hints (dim)."""
        return self.end_text() + styled(visible(text), DIM_STYLE, self.colour) + "\n"

    def end_text(self) -> str:
        """Whatever streamed text is still held back, and a line break if a line is open."""
        rest = self._text(self._stream.flush())
        self._stream = SafeStream(MARKS)
        if self._mid_line:
            self._mid_line = False
            return rest + "\n"
        return rest

    def _text(self, text: str) -> str:
        if text:
            self._mid_line = not text.endswith("\n")
        return text
