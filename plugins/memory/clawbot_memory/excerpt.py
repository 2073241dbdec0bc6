"""``memory_get``'s reading: lines of one memory file, streamed, counted as the index counts them."""

from __future__ import annotations

import io
import os

from clawbot.types import MemoryExcerpt, MemoryPathError

from clawbot_memory.sources import MAX_FILE_BYTES, MemoryFile, Sources


def read_lines(sources: Sources, file: MemoryFile, start: int, count: int | None) -> MemoryExcerpt:
    """Lines ``start``.. of a file, counted as the index counts them, read as a stream."""
    shown = file.path
    picked: list[str] = []
    total = 0
    try:
        with io.TextIOWrapper(sources.open(file), encoding="utf-8", newline="\n") as handle:
            if os.fstat(handle.fileno()).st_size > MAX_FILE_BYTES:  # as the index skips it
                raise MemoryPathError(f"{shown} is larger than {MAX_FILE_BYTES // (1024 * 1024)} MB, too big to be memory")
            for total, line in enumerate(handle, 1):  # noqa: B007 - total is the count
                if total >= start and (count is None or len(picked) < count):
                    picked.append(line.rstrip("\n").removesuffix("\r"))
    except UnicodeDecodeError:
        raise MemoryPathError(f"{shown} is not UTF-8 text") from None
    except OSError as exc:
        raise MemoryPathError(f"{shown} could not be read ({exc.strerror or exc})") from None
    return MemoryExcerpt(path=shown, start_line=start, end_line=start + len(picked) - 1, total_lines=total, text="\n".join(picked))
