"""Text on its way to a chat: clawbot's own notices versus what the model or a tool said.

Everything the kernel hands a channel passes :func:`outgoing_text`: control and format
characters become ``\\uXXXX`` (an escape sequence in a reply cannot erase or redraw what a
terminal shows), and, unless the kernel itself wrote the text, the notice mark channels put
in front of clawbot's notices (``OutboundMessage.NOTICE_MARK``) is broken up, so a reply
cannot pass for a notice. A notice quotes untrusted pieces (the command awaiting approval,
the lines a model wrote into SOUL.md) through :func:`quoted`, which does the same to them;
a piece that may span lines goes through :func:`quoted_block` (every line behind a gutter
mark, so none can pass for a line of the notice) or :func:`quoted_line` (its line breaks
shown as ``\\n``).
"""

from __future__ import annotations

from clawbot.safetext import defuse, visible
from clawbot.types import OutboundMessage

MARKS = (OutboundMessage.NOTICE_MARK,)


def quoted(text: str) -> str:
    """An untrusted piece of text as a notice may show it."""
    return defuse(visible(text), MARKS)


# U+2502 BOX DRAWINGS LIGHT VERTICAL: a visible rule down the left of quoted lines.
GUTTER = "\u2502 "


def quoted_line(text: str) -> str:
    """An untrusted piece shown on one line of a notice: line breaks written as ``\\n``."""
    return quoted(text).replace("\n", "\\n")


def quoted_block(text: str) -> str:
    """Untrusted lines (a command) as a notice shows them: each behind :data:`GUTTER`.

    Nothing in them can then start a line of the notice ("Why:", "Reply /approve ..."), and a
    run of blank lines shows as one line saying how many, so it cannot push the rest of the
    text out of view.
    """
    out: list[str] = []
    blanks = 0
    for line in [*quoted(text).split("\n"), None]:
        if line is not None and not line.strip():
            blanks += 1
            continue
        if blanks == 1 and line is not None:
            out.append(GUTTER.rstrip())
        elif blanks:
            out.append(f"{GUTTER}({blanks} blank line{'s' if blanks > 1 else ''})")
        blanks = 0
        if line is not None:
            out.append(GUTTER + line)
    return "\n".join(out)


def outgoing_text(text: str, *, notice: bool) -> str:
    """``text`` as a channel receives it: a notice is clawbot's own, anything else is not."""
    return visible(text) if notice else quoted(text)
