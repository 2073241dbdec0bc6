"""``sessions.json`` read once and kept while it is unchanged on disk.

A gateway reads the index several times per turn; parsing the whole file each time made a
turn's cost grow with the number of sessions. The parsed file is kept with an open handle on
the inode it came from (or that this process wrote): while the handle is open the kernel
cannot give that inode number to another file, so a path that still has the same device and
inode is the very file parsed. Every writer replaces the file by rename, never in place, so
the same inode means the same content; mtime, ctime and size are compared too, for a file
someone edited in place by hand. One ``stat`` per read instead of a read and a parse.
"""

from __future__ import annotations

import contextlib
import os
import threading
from pathlib import Path
from typing import Any

from clawbot.statefile import PRIVATE_FILE_MODE, decode_state, json_text, replace_file, report_once

#: what :meth:`IndexFile.read` returns when there is no file
MISSING = object()


def _same(a: os.stat_result, b: os.stat_result) -> bool:
    return (a.st_dev, a.st_ino, a.st_size, a.st_mtime_ns, a.st_ctime_ns) == (b.st_dev, b.st_ino, b.st_size, b.st_mtime_ns, b.st_ctime_ns)


class IndexFile:
    """The JSON object in one file, parsed at most once per change of the file."""

    def __init__(self, path: Path, what: str) -> None:
        self.path = path
        self._what = what  # how clawbot goes on without a readable file, for the warning
        self._guard = threading.Lock()
        self._pin: int | None = None  # an open descriptor on the inode ``_data`` came from
        self._stat: os.stat_result | None = None
        self._data: Any = None

    def read(self) -> Any:
        """The parsed JSON (a fresh shallow copy of a dict), :data:`MISSING`, or ``None`` when unusable."""
        with self._guard:
            if self._pin is not None:
                try:
                    current = os.stat(self.path)
                except FileNotFoundError:
                    self._forget()
                    return MISSING
                except OSError:
                    current = None
                if current is not None and self._stat is not None and _same(current, self._stat):
                    return dict(self._data) if isinstance(self._data, dict) else self._data
            return self._load()

    def _load(self) -> Any:
        try:
            fd = os.open(self.path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        except FileNotFoundError:
            self._forget()
            return MISSING
        except OSError as exc:
            self._forget()
            report_once(self.path, f"cannot be read ({exc.strerror or exc}); {self._what}")
            return None
        try:
            stat = os.fstat(fd)
            chunks = []
            while chunk := os.read(fd, 1 << 20):
                chunks.append(chunk)
        except OSError as exc:
            os.close(fd)
            self._forget()
            report_once(self.path, f"cannot be read ({exc.strerror or exc}); {self._what}")
            return None
        data = decode_state(self.path, b"".join(chunks), self._what)
        self._keep(fd, stat, data)
        return dict(data) if isinstance(data, dict) else data

    def write(self, data: dict[str, Any], mode: int = PRIVATE_FILE_MODE) -> None:
        """Replace the file atomically (a unique temp file renamed over it) and keep ``data``.

        No fsync, like every state file (see :func:`clawbot.statefile.atomic_write_json`).
        """
        payload = json_text(data, separators=(",", ":")).encode("utf-8")
        with self._guard:
            try:
                fd = replace_file(self.path, payload, mode, keep_open=True)
                assert fd is not None
                stat = os.fstat(fd)  # after the rename, which may touch ctime
            except BaseException:
                self._forget()
                raise
            self._keep(fd, stat, data)

    def forget(self) -> None:
        """Drop what is kept (the file is about to be deleted, or was written by other means)."""
        with self._guard:
            self._forget()

    def _keep(self, fd: int, stat: os.stat_result, data: Any) -> None:
        self._forget()
        self._pin, self._stat, self._data = fd, stat, data

    def _forget(self) -> None:
        if self._pin is not None:
            with contextlib.suppress(OSError):
                os.close(self._pin)
        self._pin, self._stat, self._data = None, None, None

    def __del__(self) -> None:  # a descriptor is not closed by the garbage collector
        self._forget()
