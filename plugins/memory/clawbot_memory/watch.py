"""Watch one agent's memory files and re-index after a quiet spell (the debounce).

The memory folder and extra folders are watched with their subfolders; the workspace itself
(for MEMORY.md, and for a memory folder that appears later) and the folders of extra files
only one level deep, so a big workspace (a code checkout) costs nothing to watch. When the
set of folders changes (memory/ created or removed) the watch restarts on the new set.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path

from clawbot_memory.sources import Sources

log = logging.getLogger(__name__)

#: How often the watcher looks again for folders that do not exist yet.
RESCAN_S = 5.0


class Watcher:
    """Runs ``on_change`` once the files have been quiet for ``debounce_ms`` after a change."""

    def __init__(self, sources: Sources, debounce_ms: int, on_change: Callable[[set[Path] | None], Awaitable[None]]) -> None:
        self._sources = sources
        self._debounce = debounce_ms / 1000
        self._on_change = on_change
        self._task: asyncio.Task | None = None
        self._timer: asyncio.Task | None = None
        self._round_stop: asyncio.Event | None = None
        self._roots: tuple | None = None
        self._closing = False
        self._syncing = False
        self._again = False
        self._changed: set[Path] = set()  # paths seen changing and not yet handed to a sync
        self._unknown = False  # something changed that only a full scan can tell

    @property
    def pending(self) -> bool:
        """Whether changes were seen that no sync has been handed yet."""
        return self._unknown or bool(self._changed)

    def look_at_everything(self) -> None:
        """The next sync checks every file (changes handed over were lost to a failed sync)."""
        self._unknown = True

    def take(self) -> set[Path] | None:
        """The changed paths not yet handed to a sync, now handed over (None: rescan all)."""
        unknown, changed = self._unknown, self._changed
        self._unknown, self._changed = False, set()
        return None if unknown else changed

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    def start(self) -> None:
        if not self.running:
            self._closing = False
            self._task = asyncio.create_task(self._run(), name="clawbot-memory-watch")

    async def stop(self) -> None:
        self._closing = True
        if self._round_stop is not None:
            self._round_stop.set()
        for task in (self._timer, self._task):
            if task is not None and not task.done():
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
        self._task = self._timer = None

    def _current_roots(self) -> tuple:
        deep, flat = self._sources.watch_roots()
        return tuple(deep), tuple(flat)

    async def _run(self) -> None:
        while not self._closing:
            previous, self._roots = self._roots, self._current_roots()
            roots = self._roots
            if previous is not None and previous != roots:
                self._poke()  # what changed while the watch restarted is not reported by it
            log.debug("memory watch: deep %s, flat %s", [str(p) for p in roots[0]], [str(p) for p in roots[1]])
            stop = self._round_stop = asyncio.Event()
            deep, flat = roots
            watches = [self._watch(list(paths), recursive, stop) for paths, recursive in ((deep, True), (flat, False)) if paths]
            if not watches:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), RESCAN_S)
                continue
            try:
                await asyncio.gather(*watches)
            except asyncio.CancelledError:
                stop.set()
                raise
            except Exception:
                # a watched folder vanished mid-watch, or the OS refused a watch: look again soon
                log.debug("memory watch round ended", exc_info=True)
                stop.set()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(asyncio.Event().wait(), 0.5)

    async def _watch(self, paths: list[Path], recursive: bool, stop: asyncio.Event) -> None:
        import watchfiles

        def relevant(change: object, path: str) -> bool:
            return self._sources.is_watched_change(Path(path))

        async for changes in watchfiles.awatch(*paths, recursive=recursive, stop_event=stop, watch_filter=relevant, debounce=400, step=50):
            log.debug("memory watch: %s", sorted(path for _, path in changes))
            self._poke({Path(path) for _, path in changes})

    def _poke(self, paths: set[Path] | None = None) -> None:
        if paths is None:
            self._unknown = True
        else:
            self._changed |= paths
        if self._syncing:
            self._again = True  # re-index once more after this one, never cut one short
            return
        if self._timer is not None and not self._timer.done():
            self._timer.cancel()
        self._timer = asyncio.create_task(self._after_quiet())

    async def _after_quiet(self) -> None:
        await asyncio.sleep(self._debounce)
        self._syncing = True
        try:
            again = True
            while again:
                self._again = False
                changed = self.take()
                if changed is not None and not changed:
                    break  # a search already handed these changes to a sync
                try:
                    await self._on_change(changed)
                except Exception:
                    self.look_at_everything()  # what it was handed is not in the index
                    log.warning("memory: re-indexing after a change failed", exc_info=True)
                again = self._again
                if again:
                    await asyncio.sleep(self._debounce)
        finally:
            self._syncing = False
        if self._current_roots() != self._roots and self._round_stop is not None:
            self._round_stop.set()  # a folder appeared or went: watch the new set
