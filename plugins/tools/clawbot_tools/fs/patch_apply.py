"""Applying an Update File's hunks to a file's text, in memory.

Each hunk is found by its context and removed lines, searching after the previous hunk
and after its '@@' anchor lines. An exact match is tried first, then one that ignores
trailing whitespace; the hunk must then match exactly once. Context lines keep the
file's own text, so a tolerant match does not rewrite their whitespace.
"""

from __future__ import annotations

from collections.abc import Callable

from clawbot_tools.fs.patch_parse import Hunk

Same = Callable[[str, str], bool]
MAX_LISTED = 5


class HunkError(ValueError):
    """``str(exc)`` is the message for the model."""


def _exact(a: str, b: str) -> bool:
    return a == b


def _loose(a: str, b: str) -> bool:
    return a.rstrip() == b.rstrip()


def _stripped(a: str, b: str) -> bool:
    return a.strip() == b.strip()


def apply_hunks(text: str, hunks: list[Hunk], shown: str) -> str:
    crlf = "\r\n" in text and text.count("\r\n") == text.count("\n")
    if crlf:
        text = text.replace("\r\n", "\n")
    lines = text.split("\n")
    ends_with_newline = lines[-1] == ""
    if ends_with_newline:
        lines.pop()
    cursor = 0
    for number, hunk in enumerate(hunks, start=1):
        cursor = _apply_one(lines, hunk, cursor, f"hunk {number} of {shown} (patch line {hunk.line_no})")
    out = "\n".join(lines)
    if lines and (ends_with_newline or text == ""):
        out += "\n"
    return out.replace("\n", "\r\n") if crlf else out


def _apply_one(lines: list[str], hunk: Hunk, cursor: int, name: str) -> int:
    start = cursor
    for anchor in hunk.anchors:
        found = _find_anchor(lines, anchor, start)
        if found is None:
            raise HunkError(f"{name}: the @@ line {anchor!r} was not found after line {start}; it must repeat a line of the file\n{hunk.preview()}")
        start = found + 1
    old = hunk.old()
    if not old:  # only additions: right after the anchor, else at the end of the file
        position = start if hunk.anchors and not hunk.at_eof else len(lines)
    else:
        position = _locate(lines, old, start, hunk, name)
    replacement: list[str] = []
    index = position
    for kind, text in hunk.lines:
        if kind == "+":
            replacement.append(text)
        else:
            if kind == " ":
                replacement.append(lines[index])
            index += 1
    lines[position : position + len(old)] = replacement
    return position + len(replacement)


def _find_anchor(lines: list[str], anchor: str, start: int) -> int | None:
    for same in (_exact, _loose, _stripped):  # '@@ def f():' often drops the indentation
        for index in range(start, len(lines)):
            if same(lines[index], anchor):
                return index
    return None


def _locate(lines: list[str], old: list[str], start: int, hunk: Hunk, name: str) -> int:
    for same in (_exact, _loose):
        found = _matches(lines, old, start, hunk.at_eof, same)
        if len(found) == 1:
            return found[0]
        if len(found) > 1:
            listed = ", ".join(str(i + 1) for i in found[:MAX_LISTED]) + (", ..." if len(found) > MAX_LISTED else "")
            raise HunkError(
                f"{name} matches {len(found)} places (lines {listed}); add context lines or an '@@' line "
                f"naming the enclosing function or class so it matches once\n{hunk.preview()}"
            )
    where = " at the end of the file" if hunk.at_eof else (f" after line {start}" if start else "")
    raise HunkError(
        f"{name}: its context and '-' lines were not found{where}; read the file and copy those lines exactly\n{hunk.preview()}"
    )


def _matches(lines: list[str], old: list[str], start: int, at_eof: bool, same: Same) -> list[int]:
    last = len(lines) - len(old)
    candidates = [last] if at_eof and last >= start else range(start, last + 1)
    first = old[0]
    return [i for i in candidates if same(lines[i], first) and all(same(lines[i + k], old[k]) for k in range(1, len(old)))]
