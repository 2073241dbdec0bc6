"""Small JSON state files shared by several clawbot processes (``sessions.json``, ``auth-state.json``).

``clawbot run`` and ``clawbot agent`` may run at the same time on one state directory, so
every read-modify-write of such a file holds :func:`locked` on it, and every write goes
through :func:`atomic_write_json`: a unique temporary file in the same directory renamed
over the target, so readers see the old or the new file, never a torn one, and two writers
never share a temporary name.

Readers that only read need no lock: the rename is atomic.

A state file never locks a user out: a reader that finds one malformed (not JSON, the wrong
shape, a field of the wrong type) keeps its good entries, drops or resets the bad ones and
says so once per process with :func:`report_once` (naming the file and what was wrong). The
temporary file of a write killed before its rename is deleted by the next process that locks
the same file, once it is old enough that no live writer can still own it.
"""

from __future__ import annotations

import collections
import contextlib
import json
import logging
import math
import os
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from clawbot.safetext import LONE_SURROGATE

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]  # the module or None: locking is skipped where there is none

log = logging.getLogger(__name__)

PRIVATE_DIR_MODE = 0o700
PRIVATE_FILE_MODE = 0o600
#: a temporary file this old belongs to a write that died: writes take milliseconds
STALE_TEMP_S = 600.0
_MAX_REPORTS = 1000  # distinct problems remembered, so a long-running gateway stays bounded
# The most recent problems, oldest first: past the bound the oldest is forgotten (and told
# again should it come back), never the newest, which would then be told on every read.
_reported: collections.OrderedDict[tuple[str, str], None] = collections.OrderedDict()
_reported_lock = threading.Lock()  # readers in worker threads report too
_swept: set[str] = set()


def report_once(path: Path, problem: str) -> None:
    """Warn that ``path`` is malformed: ``problem`` says what was wrong and what clawbot does.

    Once per process and problem: a gateway reads its state files every turn, and the same
    complaint on every turn would bury everything else in the log.
    """
    key = (str(path), problem)
    with _reported_lock:
        if key in _reported:
            _reported.move_to_end(key)
            return
        _reported[key] = None
        if len(_reported) > _MAX_REPORTS:
            _reported.popitem(last=False)
    log.warning("%s: %s", path, problem)


def read_state(path: Path, what: str) -> Any:
    """The JSON value in ``path``; ``None`` when the file is missing or unusable.

    Unusable (unreadable, not UTF-8, not JSON) is reported once, saying how clawbot goes on
    without it (``what``: "ignored: every auth profile starts healthy").
    """
    try:
        payload = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        report_once(path, f"cannot be read ({exc.strerror or exc}); {what}")
        return None
    return decode_state(path, payload, what)


def decode_state(path: Path, payload: bytes, what: str) -> Any:
    """The JSON value in ``payload`` (read from ``path``); ``None``, reported once, when unusable."""
    try:
        value = json.loads(payload.decode("utf-8"))  # NaN or 1e999 load: the readers check every field
    except UnicodeDecodeError:
        report_once(path, f"is not UTF-8 text; {what}")
        return None
    except ValueError as exc:
        report_once(path, f"is not valid JSON ({_short(str(exc))}); {what}")
        return None
    if value is None:  # ``null`` reads like a missing file to the callers: say it is not one
        report_once(path, f"holds null, not its data; {what}")
    return value


def _short(text: str, limit: int = 120) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"


def shown(value: Any) -> str:
    """A field name or value quoted for a warning, cut short (a state file can hold anything)."""
    return _short(repr(value), 60)


def is_count(value: Any, limit: int = 2**53) -> bool:
    """A JSON integer from 0 to ``limit`` (``true`` is not a count)."""
    return type(value) is int and 0 <= value <= limit


def is_number(value: Any, low: float = 0.0, high: float = float(2**53)) -> bool:
    """A finite JSON number within [``low``, ``high``] (``true`` is not a number)."""
    if type(value) is int:
        return low <= value <= high  # before isfinite, which cannot take a 400-digit int
    return type(value) is float and math.isfinite(value) and low <= value <= high


def sweep_stale_temps(path: Path, older_than: float = STALE_TEMP_S) -> None:
    """Delete the temporary files of writes to ``path`` that were killed before their rename.

    Called under :func:`locked` (every writer of these files holds it), and only for files
    older than ``older_than``: a live writer's file is never that old, so even a writer that
    does not hold the lock keeps its file.
    """
    cutoff = time.time() - older_than
    prefix = f".{path.name}."
    try:
        names = [e.name for e in os.scandir(path.parent) if e.name.startswith(prefix) and e.name.endswith(".tmp")]
    except OSError:
        return
    for name in names:
        temp = path.parent / name
        with contextlib.suppress(OSError):
            if temp.lstat().st_mtime < cutoff:
                temp.unlink()


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


#: how a state file is opened to be created: never through a link someone planted
_CREATE_FLAGS = os.O_CREAT | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0)


def create_private_file(path: Path) -> None:
    """Create ``path`` empty with mode 0600 (its folder 0700) unless it exists: for a file
    another library then opens with the umask's mode (an SQLite database, whose journal and
    WAL files take the database file's mode)."""
    make_private_dir(path.parent)
    os.close(os.open(path, os.O_WRONLY | _CREATE_FLAGS, PRIVATE_FILE_MODE))


@contextlib.contextmanager
def private_append(path: Path) -> Iterator[Any]:
    """``path`` opened to append text, created 0600 (its folder 0700) when missing."""
    make_private_dir(path.parent)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | _CREATE_FLAGS, PRIVATE_FILE_MODE)
    with os.fdopen(fd, "a", encoding="utf-8") as handle:
        yield handle


@contextlib.contextmanager
def private_binary_writer(path: Path) -> Iterator[Any]:
    """``path`` opened to write bytes from its start, 0600 (created so, or made so), its folder 0700."""
    make_private_dir(path.parent)
    fd = os.open(path, os.O_WRONLY | os.O_TRUNC | _CREATE_FLAGS, PRIVATE_FILE_MODE)
    with os.fdopen(fd, "wb") as handle:
        os.fchmod(handle.fileno(), PRIVATE_FILE_MODE)
        yield handle


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


def atomic_write_json(path: Path, data: Any, mode: int = PRIVATE_FILE_MODE, *, durable: bool = False, readable: bool = False) -> None:
    """Write ``data`` as compact JSON to ``path`` atomically, the file getting ``mode``.

    Compact separators: ``indent`` would force the pure-Python encoder (about 4x slower).
    ``readable`` indents it and ends it with a newline, for a small file people open
    themselves (a stored credential).

    No fsync unless ``durable``: measured, it adds 0.15-0.3 ms to every turn (the session
    index is written once per turn; bench/turn.py part 1 went from ~1.1 to ~1.4 ms), and it
    buys nothing for these files. Both are derived data whose readers survive an empty or
    old file after a power loss (the index is rebuilt from the transcripts, auth health
    starts over), and the transcripts themselves are appended without fsync, so an index
    more durable than its transcript is no gain. The rename still makes every write atomic
    for other processes, which is what concurrent ``clawbot`` commands need (and ext4's
    default ``auto_da_alloc`` writes out a file renamed over an existing one with the rename).
    """
    text = json_text(data, indent=2) + "\n" if readable else json_text(data, separators=(",", ":"))
    atomic_write_text(path, text, mode, durable=durable)


def atomic_write_text(path: Path, text: str, mode: int = PRIVATE_FILE_MODE, *, durable: bool = False) -> None:
    """Replace ``path`` with ``text`` atomically (a temp file renamed over it), the file getting
    ``mode``; ``durable`` fsyncs before the rename. Readers see the old or the new file, never half."""
    replace_file(path, text.encode("utf-8"), mode, durable=durable)


def replace_file(path: Path, payload: bytes, mode: int = PRIVATE_FILE_MODE, *, durable: bool = False, keep_open: bool = False) -> int | None:
    """The one way state files are replaced: ``payload`` written to a unique temp file beside
    ``path`` (created 0600, then given ``mode``) and renamed over it. ``keep_open``: return the
    new file's descriptor, still open, for a caller that keeps track of the very file it wrote."""
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")  # created 0600
    try:
        view = memoryview(payload)
        while view:
            view = view[os.write(fd, view) :]
        if hasattr(os, "fchmod"):
            os.fchmod(fd, mode)
        if durable:
            os.fsync(fd)
        os.replace(temp, path)
    except BaseException:
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise
    if keep_open:
        return fd
    os.close(fd)
    return None


@contextlib.contextmanager
def locked(path: Path) -> Iterator[None]:
    """Hold an exclusive lock for a read-modify-write of ``path`` (across processes).

    The lock is ``fcntl.flock`` on ``<path>.lock``, which stays in place (deleting it would
    let two processes lock different files). It is not reentrant: do not nest it for one
    path. It blocks the calling thread while another process holds it, which is fine for
    the few milliseconds these writes take. On platforms without ``fcntl`` (Windows) this
    is a no-op: writes stay atomic, but concurrent processes may lose an update.

    The first time a process locks ``path``, it deletes stale temporary files of killed
    writes to it (:func:`sweep_stale_temps`).
    """
    if fcntl is None:  # pragma: no cover - Windows
        yield
        return
    lock_path = path.with_name(path.name + ".lock")
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, PRIVATE_FILE_MODE)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        if str(path) not in _swept:  # once per process: a scan on every write costs each turn
            _swept.add(str(path))
            sweep_stale_temps(path)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def append_line(path: Path, line: bytes, mode: int = PRIVATE_FILE_MODE, *, durable: bool = False) -> None:
    """Append ``line`` (ending in ``\\n``) to the JSONL file ``path``, created with ``mode``.

    A file whose last line was torn (a process killed mid-write) gets a line end first, so
    the torn line stays one skipped line and never swallows this one. ``durable`` fsyncs:
    for a record that must survive a power loss (a run recorded as started).
    """
    fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, mode)
    try:
        size = os.fstat(fd).st_size
        if size and os.pread(fd, 1, size - 1) != b"\n":
            line = b"\n" + line
        view = memoryview(line)
        while view:
            view = view[os.write(fd, view) :]
        if durable:
            os.fsync(fd)
    finally:
        os.close(fd)


# -- lock files: one holder at a time across processes (a session's turn, a cron job's run) --


def open_lock_file(path: Path) -> int:
    """The lock file ``path`` opened to be locked: private, made with its folder when missing,
    close-on-exec (a command a holder starts never inherits the lock)."""
    make_private_dir(path.parent)
    return os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, PRIVATE_FILE_MODE)


def mark_holder(fd: int) -> None:
    """Write this process's pid into the lock file ``fd`` it holds: only used to name the
    holder to a process that finds the lock taken (:func:`holder_of`)."""
    with contextlib.suppress(OSError):
        mark = f"{os.getpid()}\n".encode()
        os.pwrite(fd, mark, 0)
        os.ftruncate(fd, len(mark))


def holder_of(fd: int) -> str:
    """Who holds the lock file ``fd``, as :func:`mark_holder` left it ("clawbot process 123")."""
    with contextlib.suppress(OSError, ValueError):
        pid = int(os.pread(fd, 32, 0).decode("ascii").strip())
        return f"clawbot process {pid}"
    return "another clawbot process"
