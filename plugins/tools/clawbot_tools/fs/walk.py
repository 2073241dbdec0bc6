"""Walking a directory tree for find and grep, and matching glob patterns."""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Iterator

from clawbot_tools.fs.common import SKIP_DIRS


def walk_files(top: str) -> Iterator[str]:
    """Every non-directory path under ``top``, in a stable order; symlinked dirs not entered."""
    if not os.path.isdir(top):
        yield top
        return
    for directory, dirnames, filenames in os.walk(top, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
        for name in sorted(filenames):
            yield os.path.join(directory, name)


def walk_entries(top: str) -> Iterator[tuple[str, bool]]:
    """Every path under ``top`` (dirs too) as ``(path, is_dir)``; symlinked dirs not entered."""
    for directory, dirnames, filenames in os.walk(top, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
        for name in dirnames:
            yield os.path.join(directory, name), True
        for name in sorted(filenames):
            yield os.path.join(directory, name), False


def _segment(segment: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(segment):
        char = segment[i]
        if char == "*":
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "[":
            end = segment.find("]", i + 2 if segment[i + 1 : i + 2] in ("!", "]") else i + 1)
            if end == -1:
                out.append(re.escape(char))
            else:
                body = segment[i + 1 : end]
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append("[" + body.replace("\\", "\\\\") + "]")
                i = end
        else:
            out.append(re.escape(char))
        i += 1
    return "".join(out)


@functools.lru_cache(maxsize=256)
def glob_regex(pattern: str) -> re.Pattern[str]:
    """A regex for a glob over '/'-separated relative paths; ``**`` spans directories."""
    segments = [s for s in pattern.split("/") if s not in ("", ".")]
    parts: list[str] = []
    for index, segment in enumerate(segments):
        last = index == len(segments) - 1
        if segment == "**":
            parts.append(".*" if last else "(?:[^/]+/)*")
        else:
            parts.append(_segment(segment) + ("" if last else "/"))
    return re.compile("".join(parts) + r"\Z", re.DOTALL)
