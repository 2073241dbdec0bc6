"""Markdown -> chunks of whole lines, about ``chunk_tokens`` each, overlapping a little.

A chunk never splits a line (a line longer than a chunk is a chunk of its own), and a
Markdown heading starts a new chunk (unless the chunk so far is tiny) so that it stays with
the text under it. Tokens are the kernel's offline estimate (``clawbot.tokens``), so
chunking needs no network and no tokenizer download.
"""

from __future__ import annotations

import hashlib
import re

import attrs
from clawbot.tokens import estimate_tokens

_HEADING = re.compile(r"^ {0,3}#{1,6}(?:\s|$)")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


@attrs.frozen
class Chunk:
    start_line: int  # 1-based, inclusive
    end_line: int  # 1-based, inclusive
    text: str
    #: the headings above the chunk that it does not show ("2026-01-20 (Tuesday) / API
    #: discussion"): a chunk cut from the middle of a section is still found by its date and
    #: topic. Searched by words only; the vector is of ``text`` alone (it measured better).
    context: str = ""

    @property
    def hash(self) -> str:
        return text_hash(self.text)

    @property
    def search_text(self) -> str:
        """What the keyword index holds: the heading trail, then the text."""
        from clawbot_memory.query import index_text

        return index_text(f"{self.context}\n{self.text}" if self.context else self.text)


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def split_lines(text: str) -> list[str]:
    """The file's lines as editors and ``memory_get`` number them (``\\n`` ends a line; a
    ``\\r`` before it is dropped; a final newline starts no extra line)."""
    lines = text.split("\n")
    if lines and lines[-1] == "" and text.endswith("\n"):
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def _headings(lines: list[str]) -> list[bool]:
    """Which lines are headings (a ``#`` line inside a code fence is code, not a heading)."""
    marks = []
    fence: str | None = None
    for line in lines:
        found = _FENCE.match(line)
        if fence is None and found:
            fence = found.group(1)[0]
            marks.append(False)
        elif fence is not None:
            if found and found.group(1)[0] == fence:
                fence = None
            marks.append(False)
        else:
            marks.append(bool(_HEADING.match(line)))
    return marks


def _trails(lines: list[str], heading: list[bool]) -> list[str]:
    """Per line: the headings above it that it is not, outermost first, joined by " / "
    (a heading line gets only its parents)."""
    open_: dict[int, str] = {}  # level -> heading text in force
    trails = []
    for line, is_heading in zip(lines, heading, strict=True):
        if is_heading:
            marks = line.lstrip(" ")
            level = len(marks) - len(marks.lstrip("#"))
            open_ = {k: v for k, v in open_.items() if k < level}
            trails.append(" / ".join(open_[k] for k in sorted(open_)))
            open_[level] = marks.lstrip("#").strip()
        else:
            trails.append(" / ".join(open_[k] for k in sorted(open_)))
    return trails


def chunk_markdown(text: str, *, chunk_tokens: int = 400, overlap_tokens: int = 80) -> list[Chunk]:
    """Chunks of ``text``; blank-only stretches make none."""
    lines = split_lines(text)
    heading = _headings(lines)
    trail = _trails(lines, heading)
    cost = [estimate_tokens(len(line) + 1) for line in lines]  # + the newline
    tiny = max(1, chunk_tokens // 8)
    chunks: list[Chunk] = []
    start = 0  # index of the current chunk's first line
    used = 0  # tokens in lines[start:i]

    def emit(first: int, end: int) -> None:
        body = "\n".join(lines[first:end])
        if body.strip():
            chunks.append(Chunk(start_line=first + 1, end_line=end, text=body, context=trail[first]))

    def overlap_start(first: int, end: int, room: int) -> int:
        """Where the next chunk starts: the last lines of ``first..end`` fitting in
        ``overlap_tokens`` and in ``room``, never the whole chunk (so it moves on)."""
        budget = min(overlap_tokens, room)
        back = end
        while back - 1 > first and cost[back - 1] <= budget:
            budget -= cost[back - 1]
            back -= 1
        return back

    i = 0
    while i < len(lines):
        if cost[i] > chunk_tokens:  # a line longer than a chunk: alone
            emit(start, i)
            emit(i, i + 1)
            start, used, i = i + 1, 0, i + 1
            continue
        if heading[i] and i > start and used >= tiny:
            emit(start, i)  # a new section: no overlap, the heading leads its own chunk
            start, used = i, 0
        elif used + cost[i] > chunk_tokens and i > start:
            end = i
            # a heading (and blank lines after it) at the end moves on with its text
            back = end
            while back > start and not lines[back - 1].strip():
                back -= 1
            if back > start + 1 and heading[back - 1] and sum(cost[back - 1 : i + 1]) <= chunk_tokens:
                end = back - 1
            emit(start, end)
            if end < i:
                start = end
            else:
                start = overlap_start(start, end, chunk_tokens - cost[i])
            used = sum(cost[start:i])
        used += cost[i]
        i += 1
    emit(start, len(lines))
    return chunks
