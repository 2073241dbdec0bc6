"""Index updates of concurrent turns written together: one read-modify-write per loop tick.

Every turn changes its entry in ``sessions.json`` (a new session, then its totals), and the
file holds every session of the agent: writing it once per turn made a busy gateway's turns
cost more the more chats it had. Here a turn hands its change to the agent's
:class:`IndexWriter` and waits; the changes that arrive meanwhile are applied together under
the index's file lock, to the file as it is then (other processes' updates included), and
written once. Each turn returns only after its change is on disk, so nothing a turn reported
is lost on a shutdown or a crash.

How long changes gather follows what a write costs: the next tick when writes are cheap (a
quiet chat waits for nothing), up to :data:`MAX_GATHER_S` when the index is large and turns
end faster than it can be written, so writing it takes at most about 40% of the event
loop's time however many sessions there are. A longer wait (25 ms, 3x the write) merged
more but cost each reply more than it saved: bench/gateway.py's added p99 at 300 turns/s
was 118 ms against 65 ms.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any, TypeVar

from clawbot.sessions.index import SessionIndex

T = TypeVar("T")
Change = Callable[[dict[str, dict]], Any]
#: the longest a change waits for others to join it (a turn's reply waits as long)
MAX_GATHER_S = 0.008
#: changes gather for this many times the last write's duration
GATHER_FACTOR = 1.5


class IndexWriter:
    """The one writer of an agent's index for this process's turns."""

    def __init__(self, index: SessionIndex) -> None:
        self.index = index
        self.writes = 0  # read-modify-writes done: how well changes were merged
        self._pending: list[tuple[Change, asyncio.Future[Any]]] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._last_write_s = 0.0

    async def update(self, change: Callable[[dict[str, dict]], T]) -> T:
        """Apply ``change`` to the index's entries (under the file lock, with the others of
        this tick) and return what it returned once the file is written.

        ``change`` edits the entries it is given and must not raise after editing them.
        A failed write (disk full) is handled by :meth:`SessionIndex.write_failed`: the
        change's result is still returned, as a turn must not fail over derived data.
        """
        loop = asyncio.get_running_loop()
        if self._pending and self._loop is not loop:  # left by a loop that ended: write it now
            self.flush()
        future: asyncio.Future[Any] = loop.create_future()
        if not self._pending:
            self._loop = loop
            gather = min(MAX_GATHER_S, GATHER_FACTOR * self._last_write_s)
            if gather < 0.001:
                loop.call_soon(self.flush)
            else:
                loop.call_later(gather, self.flush)
        self._pending.append((change, future))
        # shielded: a turn cancelled while waiting still has its change written with the rest
        return await asyncio.shield(future)

    def flush(self) -> None:
        """Write every pending change now (also what the scheduled tick does)."""
        batch, self._pending = self._pending, []
        if not batch:
            return
        index = self.index
        started = time.perf_counter()
        outcomes: list[tuple[asyncio.Future[Any], Any, BaseException | None]] = []
        try:
            with index.locked():
                raw = index.read_raw()
                for change, future in batch:
                    try:
                        outcomes.append((future, change(raw), None))
                    except Exception as exc:  # noqa: BLE001 - that turn's error, not the others'
                        outcomes.append((future, None, exc))
                self.writes += 1
                try:
                    index.write_raw(raw)
                except OSError as exc:
                    index.write_failed(exc)
        except OSError as exc:  # the lock or the directory: every waiting turn learns it
            outcomes = [(future, None, exc) for _, future in batch]
        self._last_write_s = time.perf_counter() - started
        for future, value, error in outcomes:
            if future.cancelled() or future.get_loop().is_closed():
                continue
            if error is None:
                future.set_result(value)
            else:
                future.set_exception(error)
