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

import re
import unicodedata

from clawbot.safetext import defuse, draws_nothing, visible
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


# A long command shows its first and last lines, so its start stays near the notice's header
# and its end near the reply line; what lies between is counted. With lines cut to
# LINE_WIDTH, a notice always fits a screen (13 quoted lines of at most ~160 characters).
HEAD_LINES = 8
TAIL_LINES = 4
# A line longer than this shows its start and its end around a count of what lies between:
# one padded line must not fill the screen and push the notice's header out of view.
LINE_WIDTH = 160
LINE_HEAD = 110
LINE_TAIL = 40
# A run of spaces and tabs wider than this (a tab counted as 8) shows as a count: padding
# cannot push the rest of a line far to the right, or onto rows of its own.
WIDE_BLANKS = 16

# One piece a line is cut at: an escape ``visible`` wrote, a run of blanks, or one character.
_PIECE = re.compile(r"\\u[0-9a-fA-F]{4}|\\U[0-9a-fA-F]{8}|[ \t]+|.", re.S)


def _blank_count(run: str) -> str:
    spaces, tabs = run.count(" "), run.count("\t")
    if not tabs:
        return f"\u27e8{spaces} spaces\u27e9"
    if not spaces:
        return f"\u27e8{tabs} tab{'s' if tabs > 1 else ''}\u27e9"
    return f"\u27e8{spaces} space{'s' if spaces > 1 else ''} and {tabs} tab{'s' if tabs > 1 else ''}\u27e9"


def _pieces(line: str) -> list[str]:
    """``line`` (already made visible) cut into pieces, wide runs of blanks replaced by a count."""
    pieces = _PIECE.findall(line)
    return [_blank_count(p) if p[0] in " \t" and p.count(" ") + 8 * p.count("\t") > WIDE_BLANKS else p for p in pieces]


def _columns(piece: str) -> int:
    """How many columns ``piece`` takes on a terminal (a wide East Asian character: two)."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in piece)


def _fitted(line: str) -> str:
    """``line`` with wide blanks counted and, when still too long, its middle left out (counted)."""
    pieces = _pieces(line)
    if sum(map(_columns, pieces)) <= LINE_WIDTH:
        return "".join(pieces)
    head: list[str] = []
    width = 0
    for piece in pieces:
        if width + _columns(piece) > LINE_HEAD and head:
            break
        head.append(piece)
        width += _columns(piece)
    tail: list[str] = []
    width = 0
    for piece in reversed(pieces[len(head) :]):
        if width + _columns(piece) > LINE_TAIL and tail:
            break
        tail.insert(0, piece)
        width += _columns(piece)
    hidden = len("".join(pieces[len(head) : len(pieces) - len(tail)]))
    return f"{''.join(head)} \u27e8\u2026 {hidden} more characters of this line \u2026\u27e9 {''.join(tail)}"


def summary(text: str, width: int = 48) -> str:
    """``text`` on one short line: every run of whitespace one space, made visible, cut to ``width``
    (for a question that must name what it asks about, such as a terminal's approval prompt)."""
    shown = " ".join(quoted(text).split())
    return shown if len(shown) <= width else shown[: width - 1] + "\u2026"


def _blank_run(lines: list[str]) -> str:
    """The one line a run of lines that draw nothing shows as, naming what they hold."""
    count = f"{len(lines)} blank line{'s' if len(lines) > 1 else ''}"
    hidden = sorted({c for line in lines for c in line if c not in " \t"})
    if not hidden:
        return f"{GUTTER}({count})"
    names = " ".join(f"U+{ord(c):04X}" for c in hidden[:4]) + (" ..." if len(hidden) > 4 else "")
    return f"{GUTTER}({count}, holding {names})"


def quoted_block(text: str) -> str:
    """Untrusted lines (a command) as a notice shows them: each behind :data:`GUTTER`.

    Nothing in them can then start a line of the notice ("Why:", "Reply /approve ..."). A
    run of lines that draw nothing (spaces, zero-width characters, blank braille patterns)
    shows as one line saying how many; inside a line, a wide run of spaces or tabs shows as
    a count (``\u27e85380 spaces\u27e9``) and a line longer than ``LINE_WIDTH`` its start and
    end around a count; a command of more than ``HEAD_LINES + TAIL_LINES`` lines shows its
    first and last ones around a line saying how many are not shown and that they run too.
    So no command can push the rest of the notice out of view.
    """
    raw = text.split("\n")
    shown = quoted(text).split("\n")  # quoted whole: a mark split across lines is found too
    out: list[tuple[str, int]] = []  # each line shown, with how many of the command's it stands for
    blanks: list[str] = []
    for line, shown_line in zip([*raw, None], [*shown, None], strict=True):
        if line is not None and all(map(draws_nothing, line)):
            blanks.append(line)
            continue
        if len(blanks) == 1 and not blanks[0].strip(" \t") and line is not None:
            out.append((GUTTER.rstrip(), 1))
        elif blanks:
            out.append((_blank_run(blanks), len(blanks)))
        blanks = []
        if shown_line is not None:
            out.append((GUTTER + _fitted(shown_line), 1))
    if len(out) > HEAD_LINES + TAIL_LINES + 1:
        hidden = sum(count for _line, count in out[HEAD_LINES:-TAIL_LINES])
        note = (f"{GUTTER}({hidden} more lines not shown: they are part of the command and run too)", hidden)
        out = [*out[:HEAD_LINES], note, *out[-TAIL_LINES:]]
    return "\n".join(line for line, _count in out)


def outgoing_text(text: str, *, notice: bool) -> str:
    """``text`` as a channel receives it: a notice is clawbot's own, anything else is not."""
    return visible(text) if notice else quoted(text)
