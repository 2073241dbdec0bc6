"""What the terminal shows, as text: replies, notices, a turn's live text and tool calls.

Nothing written here may draw on the user's screen: control characters in whatever arrives
are shown as ``\\uXXXX`` again, even though the kernel already did (a channel cannot assume
every sender is the kernel), and the notice mark is broken up everywhere but in clawbot's
own notices, which carry it on every line, in colour on a terminal (unless ``NO_COLOR``).
Streamed text gets the same through :class:`clawbot.safetext.SafeStream`, so a mark split
across two deltas is caught too. Tool calls show as one dim line each.
"""

from __future__ import annotations

from clawbot import OutboundMessage, TextDelta, ToolCallStarted
from clawbot.safetext import SafeStream, defuse, visible

# Bold cyan for clawbot's notices, dim for tool calls and the terminal's own hints: a reply
# cannot produce them, its escape sequences are shown as text.
NOTICE_STYLE = "\x1b[1;36m"
DIM_STYLE = "\x1b[2m"
RESET_STYLE = "\x1b[0m"
TOOL_MARK = "\u2699"  # GEAR
MARKS = (OutboundMessage.NOTICE_MARK,)


def styled(text: str, style: str, on: bool) -> str:
    return f"{style}{text}{RESET_STYLE}" if on else text


def render_message(message: OutboundMessage, colour: bool) -> str:
    """``message`` as whole lines: escaped, and a notice marked line by line."""
    mark = OutboundMessage.NOTICE_MARK
    text = defuse(visible(message.text.rstrip("\n")), MARKS)
    if not message.notice:
        return text + "\n"
    return "".join(styled(f"{mark} {line}", NOTICE_STYLE, colour) + "\n" for line in text.split("\n"))


def tool_line(event: ToolCallStarted, colour: bool) -> str:
    name = defuse(visible(event.name), MARKS).replace("\n", "\\n")
    summary = defuse(visible(event.summary), MARKS).replace("\n", "\\n")
    return styled(f"  {TOOL_MARK} {name} {summary}".rstrip(), DIM_STYLE, colour) + "\n"


class Display:
    """Turns what the gateway sends into the text to write, keeping track of a line that a
    streaming reply has begun but not ended (everything else starts on a fresh line)."""

    def __init__(self, colour: bool) -> None:
        self.colour = colour
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
        return ended if message.streamed else ended + render_message(message, self.colour)

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
