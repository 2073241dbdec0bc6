"""One turn at a time per session, across processes: a file lock held for the whole turn.

``clawbot agent`` without ``--session`` shares ``agent:main:main`` with the gateway's direct
messages, and two terminals may run turns on one session. A turn reads the transcript, then
appends its user message, the replies and the tool results as they happen; two processes
doing that at once interleave their lines (a tool call would be followed by another turn's
message and read back as interrupted) and each answers from a history missing the other's
turn. So a turn holds ``fcntl.flock`` on a lock file of its session key from before it reads
the transcript until after it records its totals.

* The lock file is ``<sessions>/<agent>/locks/<sha256 of the key>.lock``. It stays in place
  (deleting it while a turn holds it would let the next process lock a new file): one empty
  file per session key that ever had a turn. The holder writes its pid into it, so a waiting
  process can say whom it waits for.
* ``flock`` locks belong to one open file, not to a process, so two stores in one process
  exclude each other too; the kernel releases the lock when the holder exits or is killed,
  so there is never a stale lock to break.
* The lock is tried without blocking first (the usual case costs a few microseconds). When
  another process holds it, a log line says so and names the process, a dedicated thread
  blocks in ``flock`` so the event loop keeps running, and a line repeats every
  :data:`REPORT_EVERY_S` while the wait goes on. There is no time limit: the other turn ends
  by its own limits (request timeouts, ``max_iterations``, tool timeouts), and callers with a
  deadline of their own (``sessions_send``) cancel the wait, which gives the lock up cleanly.
* Without ``fcntl`` (Windows) this is a no-op: only the in-process lane serialises turns. A
  lock file that cannot be created or locked (a read-only state directory, a file system
  without ``flock``) is reported once and the turn goes on without it.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import os
import threading
import time
from collections.abc import AsyncIterator
from pathlib import Path

from clawbot.statefile import holder_of, mark_holder, open_lock_file, report_once

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]  # the module or None: locking is skipped where there is none

log = logging.getLogger(__name__)

#: how often a turn that waits for another process says it still waits
REPORT_EVERY_S = 60.0


def turn_lock_path(agent_dir: Path, key: str) -> Path:
    """The lock file of session ``key`` (hashed: a key may hold any text a channel sends)."""
    digest = hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:32]
    return agent_dir / "locks" / f"{digest}.lock"


@contextlib.asynccontextmanager
async def turn_lock(path: Path, key: str) -> AsyncIterator[None]:
    """``async with turn_lock(path, key):`` hold the cross-process lock of session ``key``."""
    if fcntl is None:  # pragma: no cover - Windows
        yield
        return
    try:
        fd = open_lock_file(path)
    except OSError as exc:
        _unlocked(path, exc)
        yield
        return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            await _wait(fd, key)
        except OSError as exc:  # a file system without flock (some network mounts)
            _unlocked(path, exc)
        mark_holder(fd)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def _unlocked(path: Path, exc: OSError) -> None:
    """The turn goes on without the lock: a state directory that cannot hold one must not
    stop every turn (and whatever broke it will tell the turn itself if it matters)."""
    report_once(path, f"cannot be locked ({exc.strerror or exc}); turns of other clawbot processes on this session are not kept apart")


async def _wait(fd: int, key: str) -> None:
    """Block in ``flock`` on a thread of its own until the lock is ours.

    The thread locks a duplicate of ``fd`` (the same open file, so the lock is ``fd``'s too)
    and closes it when ``flock`` returns. If this wait is cancelled, the caller closes ``fd``
    and the duplicate is then the last reference: closing it gives the lock straight back.
    """
    loop = asyncio.get_running_loop()
    got: asyncio.Future[None] = loop.create_future()
    mine = os.dup(fd)

    def settle(error: OSError | None) -> None:
        if got.done():
            return
        if error is None:
            got.set_result(None)
        else:
            got.set_exception(error)

    def block() -> None:
        error: OSError | None = None
        try:
            fcntl.flock(mine, fcntl.LOCK_EX)
        except OSError as exc:
            error = exc
        finally:
            os.close(mine)
        with contextlib.suppress(RuntimeError):  # the loop is gone: nobody waits any more
            loop.call_soon_threadsafe(settle, error)

    holder = holder_of(fd)
    log.warning("session %s has a turn running in %s; waiting for it to finish", key, holder)
    started = time.monotonic()
    threading.Thread(target=block, name=f"turn-lock {key}", daemon=True).start()
    while True:
        done, _ = await asyncio.wait({got}, timeout=REPORT_EVERY_S)
        if done:
            break
        log.warning("session %s: still waiting for %s to finish its turn (%.0f s so far)", key, holder, time.monotonic() - started)
    got.result()
    log.info("session %s: the other process finished; this turn goes on after %.1f s", key, time.monotonic() - started)
