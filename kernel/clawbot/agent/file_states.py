"""The state of a watched workspace file (a hash and its lines), read only when its stat changed.

A turn's notice of changed files (:mod:`clawbot.agent.bootstrap_changes`) compares these
before and after the turn. Looking is cheap: a file is read and hashed only when its ``stat``
(size, modification and change times, inode) differs from the last time it was read, so an
unchanged file costs a ``stat`` per look. A rewrite that keeps the size and lands within the
same clock tick as the previous write would leave the ``stat`` unchanged, so (as git does
for its index) a file modified less than :data:`RACY_NS` before it was read is read again
every time.

Every file is opened the way the bootstrap files are (:func:`~clawbot.confined.open_confined`):
what a notice shows must be inside the workspace, so a file that leads outside it, has a
second hard link or is not a regular file is never read. Its state only says so (``refused``),
and the notice says the file now leads outside without showing anything of it.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections import Counter
from pathlib import Path

import attrs

from clawbot.confined import FileRefused, NotRegularFile, open_confined

RACY_NS = 2_000_000_000
"""A file modified this recently before it was read may change again without its stat showing it."""
MAX_COMPARED_BYTES = 256 * 1024
"""Larger files are compared by size, time and inode only, and reported without lines."""
NOT_REGULAR = "names a folder, a FIFO or a device, not a file"


StatKey = tuple[int, int, int, int]  # size, mtime_ns, ctime_ns, inode


@attrs.frozen
class FileState:
    fingerprint: str  # a hash of the content, or the stat of a file too large to read
    size: int
    lines: tuple[str, ...] | None  # None: too large to compare line by line (or refused)
    stat_key: StatKey = (0, 0, 0, 0)
    read_at_ns: int = 0
    head: tuple[str, ...] = ()  # of a file too large to compare: the lines of its first part
    refused: str = ""  # why it was not read, in a few words ("leads outside the workspace")

    def settled(self) -> bool:
        """Whether the stat proves the content: it was last modified well before it was read."""
        return max(self.stat_key[1], self.stat_key[2]) < self.read_at_ns - RACY_NS


StateCache = dict[Path, FileState]
"""The last state read of each file, reused while its ``stat`` is unchanged."""


@attrs.frozen
class FileChange:
    name: str
    before: FileState | None  # None: missing (or not yet watched)
    after: FileState | None  # None: deleted
    lines_shown: bool
    skill: bool = False  # a workspace skill's SKILL.md rather than a bootstrap file


def _stat_key(info: os.stat_result) -> StatKey:
    return (info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino)


def _lines(data: bytes) -> tuple[str, ...]:
    lines = data.decode("utf-8", errors="replace").split("\n")
    if lines[-1] == "":
        lines.pop()
    return tuple(lines)


def _unmatched(lines: tuple[str, ...], other: tuple[str, ...]) -> list[str]:
    """The lines of ``lines`` left over once each line of ``other`` has cancelled one copy."""
    left = Counter(other)
    out = []
    for line in lines:
        if left[line] > 0:
            left[line] -= 1
        else:
            out.append(line)
    return out


def line_changes(before: FileState | None, after: FileState) -> tuple[list[str], list[str]]:
    """The lines added and removed, compared as multisets: linear in the size, a moved line is no change."""
    old, new = (before.lines or ()) if before is not None else (), after.lines or ()
    return _unmatched(new, old), _unmatched(old, new)


def refused_state(why: str) -> FileState:
    return FileState(f"refused:{why}", 0, None, refused=why)


def read_state(path: Path, root: Path) -> FileState | None:
    """The state of the file ``path`` inside the workspace ``root``; ``None`` when there is none."""
    read_at = time.time_ns()
    try:
        fd = open_confined(path, root)
    except FileRefused as exc:
        return refused_state(exc.summary)
    except NotRegularFile:
        return refused_state(NOT_REGULAR)
    except OSError:
        return None
    try:
        with os.fdopen(fd, "rb") as handle:
            info = os.fstat(handle.fileno())
            key = _stat_key(info)
            data = handle.read(MAX_COMPARED_BYTES + 1)
    except OSError:
        return None
    if len(data) > MAX_COMPARED_BYTES:  # compared by its stat; the head still names a skill
        return FileState(f"stat:{key}", max(info.st_size, len(data)), None, key, read_at, _lines(data[:MAX_COMPARED_BYTES]))
    return FileState(hashlib.sha256(data).hexdigest(), len(data), _lines(data), key, read_at)


def current_state(path: Path, root: Path, cache: StateCache) -> FileState | None:
    """``read_state``, skipped while the file's ``stat`` matches the state last read."""
    try:
        info = os.stat(path)
    except OSError:
        info = None
    known = cache.get(path)
    if info is not None and known is not None and _stat_key(info) == known.stat_key and known.settled():
        return known
    state = read_state(path, root)
    if state is None or state.refused:  # only what was read is vouched for by its stat
        cache.pop(path, None)
    else:
        cache[path] = state
    return state
