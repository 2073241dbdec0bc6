"""Applying an Update File's hunks to a file's text, in memory.

Each hunk is found by its context and removed lines, searching after the previous hunk
and after its '@@' anchor lines. An exact match is tried first, then one that ignores
trailing whitespace; the hunk must then match exactly once. An '@@' line is looked for
exactly, then ignoring trailing whitespace, then ignoring all surrounding whitespace.
Context lines keep the file's own text, so a tolerant match does not rewrite their
whitespace.

Matching is indexed, not a scan of every position: for each tolerance level the file's
lines are keyed once (the line itself, ``rstrip``-ed, ``strip``-ed) and a dict maps each key
to its line numbers. A hunk is then tried only where its rarest line occurs, and an '@@'
line is a binary search. All positions are worked out on the original lines and the new
text is built once at the end. A crafted patch can still make the candidates many (a
hunk of 'a' lines against a file of 'a' lines), so every candidate checked spends a
:class:`Budget` shared by the whole patch: past ``WORK_BUDGET`` line comparisons or
``TIME_BUDGET_S`` seconds the patch fails with :class:`PatchTooCostly`, before anything is
written.
"""

from __future__ import annotations

import bisect
import time
from collections.abc import Callable

from clawbot_tools.fs.patch_parse import Hunk

MAX_LISTED = 5
WORK_BUDGET = 5_000_000  # line comparisons for a whole patch
TIME_BUDGET_S = 5.0  # for a whole patch; the tool runs in a worker thread that cannot be killed
CHECK_CLOCK_EVERY = 512  # candidates between looks at the clock

Key = Callable[[str], str]


class HunkError(ValueError):
    """``str(exc)`` is the message for the model."""


class PatchTooCostly(HunkError):
    """Matching the patch ran past its work or time budget."""


class Budget:
    """Line comparisons and wall-clock time one patch may spend locating its hunks."""

    def __init__(self, work: int | None = None, seconds: float | None = None) -> None:
        self.left = WORK_BUDGET if work is None else work
        self.total = self.left
        self.seconds = TIME_BUDGET_S if seconds is None else seconds
        self.deadline = time.monotonic() + self.seconds

    def affords(self, cost: int) -> bool:
        return self.left >= cost

    def spend(self, cost: int, name: str) -> None:
        if self.left < cost:
            raise self.exhausted(name)
        self.left -= cost

    def check_clock(self, name: str) -> None:
        if time.monotonic() >= self.deadline:
            raise self.exhausted(name)

    def exhausted(self, name: str) -> PatchTooCostly:
        return PatchTooCostly(
            f"{name}: locating the patch's hunks took too much work (the limit is {self.total:,} line "
            f"comparisons and {self.seconds:g} s for a whole patch), so the patch was not applied; give each hunk "
            "context lines that occur rarely in the file, or an '@@' line naming the enclosing function or class"
        )


def _exact(line: str) -> str:
    return line


def _loose(line: str) -> str:
    return line.rstrip()


def _stripped(line: str) -> str:
    return line.strip()


HUNK_LEVELS: tuple[Key, ...] = (_exact, _loose)
ANCHOR_LEVELS: tuple[Key, ...] = (_exact, _loose, _stripped)  # '@@ def f():' often drops the indentation


class _Indexed:
    """A file's lines with, per tolerance level, their keys and each key's line numbers."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        self._keys: dict[Key, list[str]] = {}
        self._where: dict[Key, dict[str, list[int]]] = {}

    def keys(self, level: Key) -> list[str]:
        keys = self._keys.get(level)
        if keys is None:
            keys = self.lines if level is _exact else [level(line) for line in self.lines]
            self._keys[level] = keys
        return keys

    def where(self, level: Key) -> dict[str, list[int]]:
        """key -> the ascending numbers of the lines with that key."""
        where = self._where.get(level)
        if where is None:
            where = {}
            for number, key in enumerate(self.keys(level)):
                found = where.get(key)
                if found is None:
                    where[key] = [number]
                else:
                    found.append(number)
            self._where[level] = where
        return where


def apply_hunks(text: str, hunks: list[Hunk], shown: str, budget: Budget | None = None) -> str:
    budget = budget or Budget()
    crlf = "\r\n" in text and text.count("\r\n") == text.count("\n")
    if crlf:
        text = text.replace("\r\n", "\n")
    lines = text.split("\n")
    ends_with_newline = lines[-1] == ""
    if ends_with_newline:
        lines.pop()
    indexed = _Indexed(lines)
    out: list[str] = []
    cursor = 0  # in the original lines: everything before it is settled
    for number, hunk in enumerate(hunks, start=1):
        name = f"hunk {number} of {shown} (patch line {hunk.line_no})"
        budget.check_clock(name)
        position, replacement = _place(indexed, hunk, cursor, name, budget)
        out.extend(lines[cursor:position])
        out.extend(replacement)
        cursor = position + len(hunk.old())
    out.extend(lines[cursor:])
    result = "\n".join(out)
    if out and (ends_with_newline or text == ""):
        result += "\n"
    return result.replace("\n", "\r\n") if crlf else result


def _place(indexed: _Indexed, hunk: Hunk, cursor: int, name: str, budget: Budget) -> tuple[int, list[str]]:
    """Where the hunk's old lines start (in the original lines), and what replaces them."""
    lines = indexed.lines
    start = cursor
    for anchor in hunk.anchors:
        found = _find_anchor(indexed, anchor, start)
        if found is None:
            raise HunkError(f"{name}: the @@ line {anchor!r} was not found after line {start}; it must repeat a line of the file\n{hunk.preview()}")
        start = found + 1
    old = hunk.old()
    if not old:  # only additions: right after the anchor, else at the end of the file
        position = start if hunk.anchors and not hunk.at_eof else len(lines)
    else:
        position = _locate(indexed, old, start, hunk, name, budget)
    replacement: list[str] = []
    index = position
    for kind, text in hunk.lines:
        if kind == "+":
            replacement.append(text)
        else:
            if kind == " ":
                replacement.append(lines[index])
            index += 1
    return position, replacement


def _find_anchor(indexed: _Indexed, anchor: str, start: int) -> int | None:
    """The first line at or after ``start`` equal to ``anchor``, at the strictest level that has one."""
    for level in ANCHOR_LEVELS:
        numbers = indexed.where(level).get(level(anchor))
        if numbers:
            at = bisect.bisect_left(numbers, start)
            if at < len(numbers):
                return numbers[at]
    return None


def _locate(indexed: _Indexed, old: list[str], start: int, hunk: Hunk, name: str, budget: Budget) -> int:
    for level in HUNK_LEVELS:
        found, complete = _matches(indexed, old, start, hunk.at_eof, level, name, budget)
        if len(found) == 1:
            return found[0]
        if len(found) > 1:
            listed = ", ".join(str(i + 1) for i in found[:MAX_LISTED]) + (", ..." if len(found) > MAX_LISTED else "")
            count = str(len(found)) if complete else f"at least {len(found)}"
            raise HunkError(
                f"{name} matches {count} places (lines {listed}); add context lines or an '@@' line "
                f"naming the enclosing function or class so it matches once\n{hunk.preview()}"
            )
    where = " at the end of the file" if hunk.at_eof else (f" after line {start}" if start else "")
    raise HunkError(f"{name}: its context and '-' lines were not found{where}; read the file and copy those lines exactly\n{hunk.preview()}")


def _matches(indexed: _Indexed, old: list[str], start: int, at_eof: bool, level: Key, name: str, budget: Budget) -> tuple[list[int], bool]:
    """The line numbers (ascending) where ``old`` matches at ``level``, and whether the list is complete.

    Only the places where the hunk's rarest line occurs are checked. The list is cut short
    only when the budget runs out after two matches were found: the hunk is ambiguous
    either way. With fewer, running out is a :class:`PatchTooCostly`.
    """
    size = len(old)
    last = len(indexed.lines) - size  # the last position the hunk fits at
    if last < start:
        return [], True
    keys = indexed.keys(level)
    wanted = [level(line) for line in old]
    if at_eof:
        budget.spend(size, name)
        return ([last] if keys[last:] == wanted else []), True
    where = indexed.where(level)
    # the rarest line of the hunk: every match has it at its offset
    offset, numbers = min(enumerate(where.get(key, ()) for key in wanted), key=lambda pair: len(pair[1]))
    if not numbers:
        return [], True
    low = bisect.bisect_left(numbers, start + offset)
    high = bisect.bisect_right(numbers, last + offset)
    found: list[int] = []
    for count, number in enumerate(numbers[low:high]):
        if count % CHECK_CLOCK_EVERY == CHECK_CLOCK_EVERY - 1:
            budget.check_clock(name)
        if not budget.affords(size):
            if len(found) > 1:
                return found, False
            raise budget.exhausted(name)
        budget.left -= size
        position = number - offset
        if keys[position : position + size] == wanted:
            found.append(position)
    return found, True
