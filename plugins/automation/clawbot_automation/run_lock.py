"""One run of a cron job at a time, across processes: a file lock held for the whole run.

Whichever process runs a job (the gateway's scheduler, ``clawbot cron run`` with no gateway,
the ``cron`` tool in ``clawbot agent``) holds ``fcntl.flock`` on ``<state>/cron/locks/<name>.lock``
from before it records the run as started until it records how it ended. The lock is taken
without waiting: a process that finds it held does not run the job (the scheduler records
that time as skipped, ``clawbot cron run`` says which process runs it), so the model is never
asked twice for one job at once.

The kernel releases the lock when its holder exits or is killed, so a run cut off by SIGKILL
leaves no stale lock, and whoever takes the lock next knows that a ``running`` record in the
job's history belongs to a run that died (:meth:`~clawbot_automation.cron_store.CronStore.interrupt`).
The file is opened close-on-exec: a command the run starts never inherits the lock and
never keeps it past its gateway's death. Without ``fcntl`` (Windows), or where the lock file
cannot be made, runs go on unlocked (reported once).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

from clawbot.statefile import holder_of, mark_holder, open_lock_file, report_once

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]  # the module or None: locking is skipped where there is none


class JobRunning(Exception):
    """The job is running already, in another process or another task of this one."""


@contextlib.contextmanager
def job_run_lock(path: Path, name: str) -> Iterator[None]:
    """``with job_run_lock(path, name):`` run job ``name``; :class:`JobRunning` when it runs already."""
    if fcntl is None:  # pragma: no cover - Windows
        yield
        return
    try:
        fd = open_lock_file(path)
    except OSError as exc:
        _unlocked(path, name, exc)
        yield
        return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise JobRunning(f"cron job {name} is running already, in {holder_of(fd)}") from None
        except OSError as exc:  # a file system without flock (some network mounts)
            _unlocked(path, name, exc)
        else:
            mark_holder(fd)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def _unlocked(path: Path, name: str, exc: OSError) -> None:
    report_once(path, f"cannot be locked ({exc.strerror or exc}); runs of cron job {name} in other clawbot processes are not kept apart")
