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
# and its end near the reply line; what lies between is counted. Every line a notice shows
# is cut to LINE_WIDTH columns, two rows on an 80-column terminal, so a notice always fits
# a 40-row screen: 10 quoted lines, the header, why, 5 lines of grants, what allow-always
# remembers, what is hidden and the reply line, two rows each at most.
HEAD_LINES = 6
TAIL_LINES = 3
# A line longer than this shows its start and its end around a count of what lies between:
# one padded line must not fill the screen and push the notice's header out of view.
LINE_WIDTH = 128
LINE_HEAD = 72
LINE_TAIL = 28
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


def _pieces(line: str) -> list[tuple[str, int]]:
    """``line`` (already made visible) cut into pieces, each with how many of the original
    characters it stands for; wide runs of blanks replaced by a count."""
    out = []
    for piece in _PIECE.findall(line):
        if piece[0] in " \t":
            wide = piece.count(" ") + 8 * piece.count("\t") > WIDE_BLANKS
            out.append((_blank_count(piece) if wide else piece, len(piece)))
        else:
            out.append((piece, 1 if piece[0] == "\\" and len(piece) > 1 else len(piece)))
    return out


def _columns(piece: str) -> int:
    """How many columns ``piece`` takes on a terminal at most (a wide East Asian character:
    two; a tab: up to eight)."""
    return sum(8 if c == "\t" else 2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in piece)


def _fitted(line: str, width: int = LINE_WIDTH) -> tuple[str, int]:
    """``line`` with wide blanks counted and, when still wider than ``width`` columns, its
    middle left out (counted); with how many characters were left out."""
    pieces = _pieces(line)
    if sum(_columns(p) for p, _n in pieces) <= width:
        return "".join(p for p, _n in pieces), 0
    label = " \u27e8\u2026 {} more characters \u2026\u27e9 "
    room = max(8, width - len(label) - 6)
    head_room = max(4, room * LINE_HEAD // (LINE_HEAD + LINE_TAIL))
    head: list[tuple[str, int]] = []
    used = 0
    for piece, count in pieces:
        if used + _columns(piece) > head_room and head:
            break
        head.append((piece, count))
        used += _columns(piece)
    tail: list[tuple[str, int]] = []
    used = 0
    for piece, count in reversed(pieces[len(head) :]):
        if used + _columns(piece) > room - head_room and tail:
            break
        tail.insert(0, (piece, count))
        used += _columns(piece)
    hidden = sum(n for _p, n in pieces[len(head) : len(pieces) - len(tail)])
    return "".join(p for p, _n in head) + label.format(hidden) + "".join(p for p, _n in tail), hidden


def fitted_line(text: str, width: int = LINE_WIDTH) -> tuple[str, int]:
    """An untrusted piece on one line of a notice, cut to ``width`` columns: (what is shown,
    how many characters it leaves out)."""
    return _fitted(quoted_line(text), width)


def summary(text: str, width: int = 48) -> str:
    """``text`` on one short line: every run of whitespace one space, made visible, and when
    longer than ``width`` its start and end around an ellipsis (for a question that must
    name what it asks about: two commands differing only at the end read differently)."""
    shown = " ".join(quoted(text).split())
    if len(shown) <= width:
        return shown
    head = (width - 1) * 3 // 5
    return shown[:head] + "\u2026" + shown[len(shown) - (width - 1 - head) :]


def _blank_run(lines: list[str]) -> str:
    """The one line a run of lines that draw nothing shows as, naming what they hold."""
    count = f"{len(lines)} blank line{'s' if len(lines) > 1 else ''}"
    hidden = sorted({c for line in lines for c in line if c not in " \t"})
    if not hidden:
        return f"{GUTTER}({count})"
    names = " ".join(f"U+{ord(c):04X}" for c in hidden[:4]) + (" ..." if len(hidden) > 4 else "")
    return f"{GUTTER}({count}, holding {names})"


def quoted_block(text: str) -> str:
    """Untrusted lines (a command) as a notice shows them: see :func:`fitted_block`."""
    return fitted_block(text)[0]


def fitted_block(text: str) -> tuple[str, int]:
    """Untrusted lines (a command) as a notice shows them, each behind :data:`GUTTER`, and
    how many of their characters are left out.

    Nothing in them can then start a line of the notice ("Why:", "Reply /approve ..."). A
    run of lines that draw nothing (spaces, zero-width characters, blank braille patterns)
    shows as one line saying how many; inside a line, a wide run of spaces or tabs shows as
    a count (``\u27e85380 spaces\u27e9``) and a line wider than ``LINE_WIDTH`` its start and
    end around a count; a command of more than ``HEAD_LINES + TAIL_LINES`` lines shows its
    first and last ones around a line saying how many are not shown and that they run too.
    So no command can push the rest of the notice out of view; :func:`full_block` shows it all.
    """
    raw = text.split("\n")
    shown = quoted(text).split("\n")  # quoted whole: a mark split across lines is found too
    # each line shown, with how many of the command's lines and characters (line breaks
    # included) it stands for, and how many characters it leaves out
    out: list[tuple[str, int, int, int]] = []
    blanks: list[str] = []
    for line, shown_line in zip([*raw, None], [*shown, None], strict=True):
        if line is not None and all(map(draws_nothing, line)):
            blanks.append(line)
            continue
        size = sum(len(blank) + 1 for blank in blanks)
        if len(blanks) == 1 and not blanks[0].strip(" \t") and line is not None:
            out.append((GUTTER.rstrip(), 1, size, 0))
        elif blanks:
            out.append((_blank_run(blanks), len(blanks), size, 0))
        blanks = []
        if shown_line is not None and line is not None:
            fitted, left = _fitted(shown_line, LINE_WIDTH - len(GUTTER))
            out.append((GUTTER + fitted, 1, len(line) + 1, left))
    if len(out) > HEAD_LINES + TAIL_LINES + 1:
        middle = out[HEAD_LINES:-TAIL_LINES]
        count = sum(lines for _line, lines, _size, _left in middle)
        note = f"{GUTTER}({count} more lines not shown: they are part of the command and run too)"
        out = [*out[:HEAD_LINES], (note, count, 0, sum(size for _line, _lines, size, _left in middle)), *out[-TAIL_LINES:]]
    return "\n".join(line for line, *_counts in out), sum(left for *_shown, left in out)


def _escaped(char: str) -> str:
    code = ord(char)
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def full_block(text: str) -> str:
    """Untrusted lines (a command) in full, each behind :data:`GUTTER`: nothing left out or
    counted, only made visible; a character that draws nothing but a space or a tab shows as
    ``\\uXXXX`` too (a no-break space is not a space to a shell)."""
    rows = []
    for line in quoted(text).split("\n"):
        shown = "".join(c if c in " \t" or not draws_nothing(c) else _escaped(c) for c in line)
        rows.append(GUTTER + shown if shown else GUTTER.rstrip())
    return "\n".join(rows)


def cut_rows(line: str, columns: int, continued: str = "\u2506 ") -> list[str]:
    """``line`` cut into rows of at most ``columns`` columns, each after the first led by
    ``continued`` (for a terminal that would otherwise wrap it where it likes)."""
    out, current, used = [], "", 0
    for char in line:
        width = _columns(char)
        if used + width > columns and current:
            out.append(current)
            current, used = continued, len(continued)
        current += char
        used += width
    out.append(current)
    return out


def outgoing_text(text: str, *, notice: bool) -> str:
    """``text`` as a channel receives it: a notice is clawbot's own, anything else is not."""
    return visible(text) if notice else quoted(text)
