"""``memory_get``'s reading: lines of one memory file, counted as the index counts them.

The file is read once, at most one byte past the size cap: a file that grows while it is
read (``yes >> memory/notes.md`` in the background) is refused at the cap, as the index
skips it, instead of being read as far as it grows.
"""

from __future__ import annotations

import io
import os

from clawbot.types import MemoryExcerpt, MemoryPathError

from clawbot_memory.sources import MAX_FILE_BYTES, MemoryFile, Sources


def read_lines(sources: Sources, file: MemoryFile, start: int, count: int | None) -> MemoryExcerpt:
    """Lines ``start``.. of a file, counted as the index counts them."""
    shown = file.path
    too_big = f"{shown} is larger than {MAX_FILE_BYTES // (1024 * 1024)} MB, too big to be memory"
    try:
        with sources.open(file) as handle:
            if os.fstat(handle.fileno()).st_size > MAX_FILE_BYTES:  # refused before anything is read
                raise MemoryPathError(too_big)
            data = handle.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise MemoryPathError(f"{shown} could not be read ({exc.strerror or exc})") from None
    if len(data) > MAX_FILE_BYTES:  # it grew since the size was checked
        raise MemoryPathError(too_big)
    picked: list[str] = []
    total = 0
    try:
        for total, line in enumerate(io.TextIOWrapper(io.BytesIO(data), encoding="utf-8", newline="\n"), 1):  # noqa: B007 - total is the count
            if total >= start and (count is None or len(picked) < count):
                picked.append(line.rstrip("\n").removesuffix("\r"))
    except UnicodeDecodeError:
        raise MemoryPathError(f"{shown} is not UTF-8 text") from None
    return MemoryExcerpt(path=shown, start_line=start, end_line=start + len(picked) - 1, total_lines=total, text="\n".join(picked))
