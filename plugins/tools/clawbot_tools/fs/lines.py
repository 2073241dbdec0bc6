"""Reading a file line by line in bounded pieces, for ``read``.

Iterating a file object materializes each whole line, so a 400 MB file that is one line
cost 800 MB. Here no read is larger than a chunk or a caller's per-line cap, and the bytes
looked at in all are capped by ``budget``: beyond it, line counts are lower bounds.
Lines end at b'\\n' (a final line without one counts too), as ``wc -l`` and grep see them.
"""

from __future__ import annotations

from typing import BinaryIO

CHUNK = 64 * 1024


class Lines:
    def __init__(self, handle: BinaryIO, budget: int) -> None:
        self._handle = handle
        self._left = budget
        self.exhausted = False  # stopped for the budget, not at the end of the file

    def _take(self, size: int) -> int:
        size = min(size, self._left)
        if size <= 0:
            self.exhausted = True
        return size

    def skip(self, count: int) -> int:
        """Move past ``count`` lines; returns how many there were (fewer at EOF or budget)."""
        done = 0
        last = b"\n"
        while done < count:
            start = self._handle.tell()
            size = self._take(CHUNK)
            chunk = self._handle.read(size) if size > 0 else b""
            if not chunk:
                return done + (0 if self.exhausted or last.endswith(b"\n") else 1)
            found = chunk.count(b"\n")
            if done + found >= count:
                end = -1
                for _ in range(count - done):
                    end = chunk.index(b"\n", end + 1)
                self._handle.seek(start + end + 1)  # the rest of the chunk is read again later
                self._left -= end + 1
                return count
            done += found
            self._left -= len(chunk)
            last = chunk
        return done

    def next_line(self, keep: int) -> tuple[bytes, bool] | None:
        """The next line's first ``keep`` bytes and whether that is all of it; ``None`` at EOF.

        The rest of a longer line is read past in chunks and dropped.
        """
        size = self._take(keep)
        line = self._handle.readline(size) if size > 0 else b""
        if not line:
            return None
        self._left -= len(line)
        if line.endswith(b"\n") or len(line) < size:
            return line, True
        while not self.exhausted:
            size = self._take(CHUNK)
            rest = self._handle.readline(size) if size > 0 else b""
            self._left -= len(rest)
            if not rest or rest.endswith(b"\n"):
                break
        return line, False

    def count_rest(self) -> tuple[int, bool]:
        """How many lines remain, and whether that count is exact (not cut by the budget)."""
        found = 0
        last = b"\n"
        while True:
            size = self._take(CHUNK)
            chunk = self._handle.read(size) if size > 0 else b""
            if not chunk:
                break
            self._left -= len(chunk)
            found += chunk.count(b"\n")
            last = chunk
        if self.exhausted:
            return found, False
        return found + (0 if last.endswith(b"\n") else 1), True
