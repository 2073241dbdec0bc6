"""Atomic file writes: a temp file beside the target, fsync, then ``os.replace``."""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from pathlib import Path

DEFAULT_MODE = 0o644


def atomic_write(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` all at once; an existing file keeps its mode.

    On any failure the original file is untouched and the temp file is removed.
    """
    directory = path.parent
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode)
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        mode = DEFAULT_MODE & ~umask
    fd, temp_name = tempfile.mkstemp(prefix=f".{path.name[:200]}.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temp_name, mode)
        os.replace(temp_name, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp_name)
        raise
    _fsync_dir(directory)


def _fsync_dir(directory: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
