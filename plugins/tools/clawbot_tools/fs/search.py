"""Searching one file for grep, each line under a time limit."""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Callable

import regex

from clawbot_tools.fs.common import looks_binary
from clawbot_tools.fs.fd import open_read
from clawbot_tools.fs.paths import PathRefused
from clawbot_tools.fs.pattern import Prefilter

MAX_FILE_BYTES = 5 * 1024 * 1024
MAX_LINE_CHARS = 300  # shown per matching line
# searched per line: a pattern with a repeated group, e.g. (.)*, keeps ~110 bytes per
# character it passes, so a 5 MB line would cost ~550 MB
MAX_SEARCH_CHARS = 256 * 1024
# one line may take this long; more means catastrophic backtracking, not a slow disk
PATTERN_TIMEOUT_S = 1.0


class PatternTooSlow(Exception):
    """The pattern ran out of time on one line; ``where`` is 'path:line'."""

    def __init__(self, where: str, seconds: float) -> None:
        super().__init__(where)
        self.where = where
        self.seconds = seconds


class FileSearch:
    """Matches collected across files, until ``deadline`` (a ``time.monotonic()`` value)."""

    def __init__(self, pattern: regex.Pattern[str], root: str | None, deadline: float) -> None:
        self.pattern = pattern
        # Rules out most files at once: by strings every match needs, and for patterns whose
        # matching cannot depend on the text around a line (no anchors, lookarounds, \b, ...)
        # by one search of the whole file. None: every line of every file is searched.
        self.prefilter = Prefilter.for_pattern(pattern, whole_text_limit=MAX_SEARCH_CHARS)
        self.root = root
        self.deadline = deadline
        self.results: list[str] = []
        self.long_lines = 0
        self.timed_out = False  # the deadline passed; the file being searched was left unfinished

    def out_of_time(self) -> bool:
        if time.monotonic() >= self.deadline:
            self.timed_out = True
        return self.timed_out

    def file(self, full: str, shown_path: Callable[[], str], limit: int) -> int | None:
        """Add the file's matching lines (up to ``limit`` in all); ``None`` when it was skipped.

        ``shown_path`` builds the path as the model sees it, called only once a line matches.
        """
        try:
            data = self._load(full)
        except (OSError, PathRefused):
            return None
        if data is None:
            return None
        found = 0
        text = data.decode("utf-8", "replace")
        if self._matches_nowhere(text):
            return 0
        shown = ""
        lines = text.split("\n")
        if lines[-1] == "":
            lines.pop()  # after the final newline: not a line
        for number, line in enumerate(lines, start=1):
            line = line.removesuffix("\r")
            if self._search(line, shown_path, number):
                shown = shown or shown_path()
                shortened = line if len(line) <= MAX_LINE_CHARS else line[:MAX_LINE_CHARS] + "..."
                self.results.append(f"{shown}:{number}: {shortened}")
                found += 1
                if len(self.results) >= limit:
                    break
            elif self.timed_out:
                break
        return found

    def _load(self, full: str) -> bytes | None:
        """The file's bytes, or ``None`` for what grep skips: non-regular, too big, binary."""
        with os.fdopen(open_read(full, self.root, follow=True), "rb") as handle:
            info = os.fstat(handle.fileno())
            if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_FILE_BYTES:
                return None
            data = handle.read(MAX_FILE_BYTES + 1)
        if len(data) > MAX_FILE_BYTES or looks_binary(data):
            return None
        return data

    def _matches_nowhere(self, text: str) -> bool:
        """True when the prefilter proves no line of the file can match.

        A timeout just means: search line by line.
        """
        if self.prefilter is None:
            return False
        left = self.deadline - time.monotonic()
        if left <= 0:
            return False
        return not self.prefilter.may_match(text, min(PATTERN_TIMEOUT_S, left))

    def _search(self, line: str, shown_path: Callable[[], str], number: int) -> bool:
        if len(line) > MAX_SEARCH_CHARS:
            line = line[:MAX_SEARCH_CHARS]
            self.long_lines += 1
        left = self.deadline - time.monotonic()
        if left <= 0:
            self.timed_out = True
            return False
        timeout = min(PATTERN_TIMEOUT_S, left)
        try:
            return self.pattern.search(line, timeout=timeout) is not None
        except TimeoutError:
            if timeout < PATTERN_TIMEOUT_S:  # the whole call's time ran out, not this line's
                self.timed_out = True
                return False
            raise PatternTooSlow(f"{shown_path()}:{number}", timeout) from None
