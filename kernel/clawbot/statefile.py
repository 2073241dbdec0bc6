"""Small JSON state files shared by several clawbot processes (``sessions.json``, ``auth-state.json``).

``clawbot run`` and ``clawbot agent`` may run at the same time on one state directory, so
every read-modify-write of such a file holds :func:`locked` on it, and every write goes
through :func:`atomic_write_json`: a unique temporary file in the same directory renamed
over the target, so readers see the old or the new file, never a torn one, and two writers
never share a temporary name.

Readers that only read need no lock: the rename is atomic.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from clawbot.safetext import LONE_SURROGATE

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

PRIVATE_DIR_MODE = 0o700
PRIVATE_FILE_MODE = 0o600


def make_private_dir(directory: Path) -> None:
    """Create ``directory`` and any missing parents with mode 0700 (existing ones are left as they are).

    ``Path.mkdir(parents=True, mode=...)`` applies the mode to the last component only.
    """
    if directory.is_dir():
        return
    missing = []
    current = directory
    while not current.exists():
        missing.append(current)
        if current.parent == current:
            break
        current = current.parent
    for path in reversed(missing):
        try:
            path.mkdir(mode=PRIVATE_DIR_MODE)
        except FileExistsError:  # another process was faster
            pass


def json_text(data: Any, **options: Any) -> str:
    """JSON text of ``data`` that UTF-8 can always store, non-ASCII text kept readable.

    ``json.dumps(ensure_ascii=False)`` leaves a lone surrogate (from a model's ``"\\ud800"``,
    a file name, a channel) raw, and writing it as UTF-8 raises: the write, and whatever turn
    or decision made it, would be lost. Here it becomes its ``\\uXXXX`` escape instead (it can
    only stand inside a JSON string), which reads back as exactly the same string.
    """
    text = json.dumps(data, ensure_ascii=False, **options)
    if LONE_SURROGATE.search(text) is None:
        return text
    return LONE_SURROGATE.sub(lambda found: f"\\u{ord(found.group()):04x}", text)


def atomic_write_json(path: Path, data: Any, mode: int = PRIVATE_FILE_MODE, *, durable: bool = False) -> None:
    """Write ``data`` as compact JSON to ``path`` atomically, the file getting ``mode``.

    Compact separators: ``indent`` would force the pure-Python encoder (about 4x slower).

    No fsync unless ``durable``: measured, it adds 0.15-0.3 ms to every turn (the session
    index is written once per turn; bench/turn.py part 1 went from ~1.1 to ~1.4 ms), and it
    buys nothing for these files. Both are derived data whose readers survive an empty or
    old file after a power loss (the index is rebuilt from the transcripts, auth health
    starts over), and the transcripts themselves are appended without fsync, so an index
    more durable than its transcript is no gain. The rename still makes every write atomic
    for other processes, which is what concurrent ``clawbot`` commands need (and ext4's
    default ``auto_da_alloc`` writes out a file renamed over an existing one with the rename).
    """
    payload = json_text(data, separators=(",", ":")).encode("utf-8")
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")  # created 0600
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
            if hasattr(os, "fchmod"):
                os.fchmod(handle.fileno(), mode)
            if durable:
                handle.flush()
                os.fsync(handle.fileno())
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise


@contextlib.contextmanager
def locked(path: Path) -> Iterator[None]:
    """Hold an exclusive lock for a read-modify-write of ``path`` (across processes).

    The lock is ``fcntl.flock`` on ``<path>.lock``, which stays in place (deleting it would
    let two processes lock different files). It is not reentrant: do not nest it for one
    path. It blocks the calling thread while another process holds it, which is fine for
    the few milliseconds these writes take. On platforms without ``fcntl`` (Windows) this
    is a no-op: writes stay atomic, but concurrent processes may lose an update.
    """
    if fcntl is None:  # pragma: no cover - Windows
        yield
        return
    lock_path = path.with_name(path.name + ".lock")
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, PRIVATE_FILE_MODE)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock
