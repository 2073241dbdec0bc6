"""Glob patterns over '/'-separated relative paths, matched in time linear-ish in the path.

The one glob matcher of clawbot and its plugins (the ``find`` and ``grep`` tools, the
bootstrap-extra-files example): ``*`` and ``?`` stay within a folder name, ``[a-z]`` and
``[!a-z]`` are character classes, and ``**`` spans zero or more folders (a trailing ``**``
at least one more name, so ``docs/**`` is everything inside ``docs``). Matching is case
sensitive on every platform.

A single regex for a whole glob backtracks badly: ``*a*a*a*a*b`` or ``**/**/**/x``
against a long path took seconds to hours. Here a pattern is split at '/' and matched
segment by segment. Within a segment, each ``*`` but the last becomes ``(?>.*?X)`` where
X is the fixed-length piece after it: the earliest X is always a right choice, so the
atomic group never retries. Across segments, ``**`` (zero or more whole segments) uses
the greedy wildcard algorithm that only ever backs up to the latest ``**``: at most
(pattern segments x path segments) segment matches.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence

MAX_GLOB_CHARS = 1000
STAR = None  # a '*' inside a segment (every other piece of a segment is a regex)
ANY_DEPTH = None  # a '**' segment


class GlobError(ValueError):
    """A glob that cannot be used; ``str(exc)`` is the message for the model."""


Matcher = Callable[[str], bool]


@functools.lru_cache(maxsize=256)
def compile_glob(pattern: str) -> Matcher:
    """A test for '/'-separated relative paths; ``**`` spans directories, ``*`` does not."""
    if len(pattern) > MAX_GLOB_CHARS:
        raise GlobError(f"glob is too long ({len(pattern)} characters; the limit is {MAX_GLOB_CHARS})")
    segments: list[str] = []
    for segment in pattern.split("/"):
        if segment in ("", ".") or (segment == "**" and segments[-1:] == ["**"]):
            continue  # '**/**' is '**'
        segments.append(segment)
    if segments[-1:] == ["**"]:
        segments[-1:] = ["*", "**"]  # a trailing '**' stands for at least one more segment
    parts = tuple(ANY_DEPTH if s == "**" else _segment_regex(s, pattern) for s in segments)
    return functools.partial(_match_path, parts)


def _match_path(parts: Sequence[re.Pattern[str] | None], path: str) -> bool:
    names = path.split("/")
    p = n = 0
    resume_p = resume_n = -1  # where to retry after the latest '**', giving it one more name
    while n < len(names):
        if p < len(parts) and parts[p] is ANY_DEPTH:
            resume_p, resume_n = p, n
            p += 1
        elif p < len(parts) and parts[p].match(names[n]):  # type: ignore[union-attr]  # not ANY_DEPTH: the branch above took that
            p += 1
            n += 1
        elif resume_p >= 0:
            resume_n += 1
            p, n = resume_p + 1, resume_n
        else:
            return False
    while p < len(parts) and parts[p] is ANY_DEPTH:
        p += 1
    return p == len(parts)


def _segment_regex(segment: str, pattern: str) -> re.Pattern[str]:
    chunks: list[list[str]] = [[]]  # fixed-length pieces between the stars
    for piece in _pieces(segment, pattern):
        if piece is STAR:
            chunks.append([])
        else:
            chunks[-1].append(piece)
    if len(chunks) == 1:
        body = "".join(chunks[0])
    else:
        first, *middle, last = ("".join(chunk) for chunk in chunks)
        body = first + "".join(f"(?>.*?{chunk})" for chunk in middle if chunk) + ".*" + last
    return re.compile(f"(?s:{body})\\Z")


def _pieces(segment: str, pattern: str) -> list[str | None]:
    """The segment as STAR markers and regex pieces that each match exactly one character."""
    pieces: list[str | None] = []
    i = 0
    while i < len(segment):
        char = segment[i]
        if char == "*":
            pieces.append(STAR)
        elif char == "?":
            pieces.append(".")
        elif char == "[":
            start = i + 1
            if segment[start : start + 1] == "!":
                start += 1
            end = segment.find("]", start + 1 if segment[start : start + 1] == "]" else start)
            if end == -1:
                pieces.append(re.escape(char))  # an unclosed '[' is an ordinary character
            else:
                pieces.append(_char_class(segment[i + 1 : end], pattern))
                i = end
        else:
            pieces.append(re.escape(char))
        i += 1
    return pieces


def _char_class(body: str, pattern: str) -> str:
    negate = body.startswith("!")
    if negate:
        body = body[1:]
    items: list[str] = []
    k = 0
    while k < len(body):
        if k + 2 < len(body) and body[k + 1] == "-":
            low, high = body[k], body[k + 2]
            if low > high:
                raise GlobError(f"bad character range [{low}-{high}] in glob {pattern!r}: the first character must not come after the second")
            items.append(f"{re.escape(low)}-{re.escape(high)}")
            k += 3
        else:
            items.append(re.escape(body[k]))
            k += 1
    return "[" + ("^" if negate else "") + "".join(items) + "]"
