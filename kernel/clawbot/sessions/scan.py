"""Finding entries in a transcript without parsing all of it.

A transcript only grows, and a turn needs only what follows its last compaction entry, so
loading starts there: the file is searched backwards for the start of a line that begins like
a compaction entry, and that line is parsed to confirm it (a line cannot begin inside an
entry: JSON text never holds a raw newline). Nothing is remembered between turns, so a file
rewritten or cut by anything else is read as it now is. Totals of the turns are found the
same way: only lines that begin like a turn entry are parsed.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import IO, Any

CHUNK = 1 << 20
MAX_HEADER = 64 * 1024  # a transcript's first line; a longer one is not a header
# How clawbot writes the start of these lines (json.dumps with its default separators, "type"
# first). A line written another way (edited by hand) is not found here; it is still read,
# and honoured, by a load that starts earlier, so only speed depends on this.
COMPACTION_LINE = b'{"type": "compaction"'
TURN_LINE = b'{"type": "turn"'


def last_compaction_offset(handle: IO[bytes], size: int) -> int | None:
    """The byte offset of the last valid compaction entry's line, or ``None`` (none found)."""
    marker = b"\n" + COMPACTION_LINE
    end = size
    following = b""  # the start of the block after this one: a marker may straddle the border
    while end > 0:
        start = max(0, end - CHUNK)
        handle.seek(start)
        chunk = handle.read(end - start)
        block = chunk + following[: len(marker) - 1]
        limit = len(block)
        while (found := block.rfind(marker, 0, limit)) != -1:
            if _is_compaction(handle, start + found + 1):
                return start + found + 1
            limit = found + len(marker) - 1  # look further back, before this marker
        following, end = chunk, start
    return None


def _is_compaction(handle: IO[bytes], offset: int) -> bool:
    handle.seek(offset)
    line = handle.readline()
    if not line.endswith(b"\n"):
        return False  # a torn last line: the process stopped while writing it
    try:
        record = json.loads(line)
    except ValueError:
        return False
    return isinstance(record, dict) and record.get("type") == "compaction" and isinstance(record.get("id"), str)


def turn_records(handle: IO[bytes]) -> Iterator[dict[str, Any]]:
    """Every whole, parseable turn entry from the handle's position on."""
    for line in handle:
        if line.startswith(TURN_LINE) and line.endswith(b"\n"):
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if isinstance(record, dict) and record.get("type") == "turn":
                yield record
