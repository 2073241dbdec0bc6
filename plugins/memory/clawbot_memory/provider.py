"""``sqlite``: the memory provider of the default set, one index file per agent.

Each agent has its own index (``<state dir>/memory/<agent>.sqlite``) over its own workspace
and the configured extra paths, so one agent's search never sees another's files. Searches
bring a stale index up to date first (a stat of each file is all it costs), unless a sync
is already running: then they answer from the last complete state.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import re
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs
from clawbot.types import (
    MemoryExcerpt,
    MemoryProvider,
    MemorySearch,
    MemoryStatus,
    MemorySyncProgress,
    MemorySyncReport,
)

from clawbot_memory.config import MemorySettings
from clawbot_memory.driver import Driver, open_driver
from clawbot_memory.excerpt import read_lines
from clawbot_memory.sources import Sources
from clawbot_memory.store import Store, get_meta, is_corruption

log = logging.getLogger(__name__)

#: A query longer than this (a pasted page) is searched by its beginning: about one chunk of
#: text, more than any question, and what keeps embedding it to a fraction of a second (the
#: model controls the query; a megabyte of it took the offline embedder over a minute).
MAX_QUERY_CHARS = 2000

EmbedderFactory = Callable[[MemorySettings, Mapping[str, str]], Any]


#: A search checks every file's stat itself while that costs less than this; above it, and
#: while the watcher runs, it relies on the watcher (docs/memory.md, "The memory index").
CHECK_BUDGET_S = 0.010


def default_embedder_factory(settings: MemorySettings, env: Mapping[str, str]) -> Any:
    """The embedder the settings name (``None`` for ``embedder = "none"``)."""
    import importlib

    base = importlib.import_module("clawbot_memory.embedders.base")
    package = importlib.import_module("clawbot_memory.embedders")
    build = getattr(package, "build_embedder", None) or base.build_embedder
    return build(base.EmbedderSettings(kind=settings.embedder, model=settings.model, base_url=settings.base_url, api_key=settings.api_key), env)


def _file_name(agent_id: str) -> str:
    """The agent's index file name, never another agent's: an id that is not already a plain
    lower-case name ("ops/x", "Work") gets a hash of itself, so it cannot meet "ops_x", or
    "work" on a case-insensitive disk."""
    plain = re.sub(r"[^a-z0-9_.-]", "_", agent_id.lower()).lstrip(".") or "_"
    if plain == agent_id:
        return plain
    return f"{plain}-{hashlib.sha256(agent_id.encode('utf-8', 'surrogatepass')).hexdigest()[:16]}"


@attrs.define(eq=False)
class _Agent:
    id: str
    sources: Sources
    store: Store
    lock: asyncio.Lock = attrs.field(factory=asyncio.Lock)
    watcher: Any = None
    last_error: str | None = None
    last_report: MemorySyncReport | None = None
    check_seconds: float = 0.0  # what the last stat of every file (is the index stale?) took


class SqliteMemory(MemoryProvider):
    name = "sqlite"

    def __init__(
        self,
        *,
        settings: MemorySettings,
        state_dir: Path,
        workspace_of: Callable[[str], Path],
        env: Mapping[str, str] | None = None,
        embedder_factory: EmbedderFactory = default_embedder_factory,
    ) -> None:
        self.settings = settings
        self._index_dir = Path(state_dir) / "memory"
        self._workspace_of = workspace_of
        self._env = dict(env or {})
        self._embedder_factory = embedder_factory
        self._driver: Driver | None = None
        self._embedder: Any = None
        self._embedder_problem: str | None = None
        self._embedder_built = False
        self._embedder_to_close: Any = None
        self._agents: dict[str, _Agent] = {}
        self._background: list[asyncio.Task] = []

    # -- parts, built on first use ---------------------------------------------------------

    async def _ready_driver(self) -> Driver:
        if self._driver is None:
            self._driver = await asyncio.to_thread(open_driver, self.settings.disable)
        return self._driver

    def _ready_embedder(self) -> Any:
        if not self._embedder_built:
            self._embedder_built = True
            try:
                self._embedder = self._embedder_to_close = self._embedder_factory(self.settings, self._env)
            except Exception as exc:
                self._embedder = None
                self._embedder_problem = f"The embedder could not be set up ({exc}): keyword search only."
                log.warning("memory: %s", self._embedder_problem)
            else:
                if self._embedder is None:
                    self._embedder_problem = 'No embedder is configured (plugins.memory.embedder = "none"): keyword search only.'
        return self._embedder

    async def _agent(self, agent_id: str) -> _Agent:
        agent = self._agents.get(agent_id)
        if agent is None:
            driver = await self._ready_driver()
            if agent_id in self._agents:  # built by another task meanwhile
                return self._agents[agent_id]
            sources = Sources.build(self._workspace_of(agent_id), self.settings.extra_paths, self._env)
            store = Store(self._index_dir / f"{_file_name(agent_id)}.sqlite", driver)
            agent = self._agents[agent_id] = _Agent(id=agent_id, sources=sources, store=store)
        return agent

    def _mode(self, driver: Driver, vectors: bool) -> str:
        if vectors:
            return "hybrid" if driver.fts5 else "vector"
        return "keyword" if driver.fts5 else "unavailable"

    # -- syncing ---------------------------------------------------------------------------

    async def sync(
        self,
        *,
        agent_id: str,
        force: bool = False,
        progress: Callable[[MemorySyncProgress], None] | None = None,
        paths: Iterable[Path] | None = None,
    ) -> MemorySyncReport:
        """``paths``: the files known to have changed (what the watcher hands over), so only
        they are looked at; None: every memory file is checked."""
        agent = await self._agent(agent_id)
        async with agent.lock:
            return await self._sync_locked(agent, force=force, progress=progress, changed=None if paths is None else set(paths))

    async def _sync_locked(
        self,
        agent: _Agent,
        *,
        force: bool = False,
        progress: Callable[[MemorySyncProgress], None] | None = None,
        changed: set[Path] | None = None,
    ) -> MemorySyncReport:
        from clawbot_memory.sync import sync_index

        embedder = self._ready_embedder()
        for attempt in (1, 2):
            try:
                report, error = await sync_index(
                    agent.store, agent.sources, self.settings, embedder, force=force, progress=progress, changed=changed if attempt == 1 else None
                )
                break
            except agent.store.driver.module.DatabaseError as exc:
                if attempt == 2 or not is_corruption(exc):
                    raise
                await asyncio.to_thread(agent.store.reset, f"it is damaged ({exc})")
        agent.last_error = error
        agent.last_report = report
        return report

    async def _freshen(self, agent: _Agent) -> str | None:
        """Sync a stale index before searching it, unless a sync is already under way (then
        the search answers from the last complete state, or waits when there is none yet).
        A sync that fails (the index busy in another process, a full disk) leaves the last
        state to search: the sentence returned says so."""
        from clawbot_memory.sync import is_stale

        watcher = agent.watcher
        handed = False
        try:
            if agent.lock.locked():
                if await asyncio.to_thread(self._never_synced, agent):
                    async with agent.lock:
                        pass
                return None
            if watcher is not None and watcher.running and agent.check_seconds > CHECK_BUDGET_S:
                # a large memory: a stat of every file would cost more than the search, and the
                # watcher sees the changes; the ones it saw and has not synced yet are synced now
                if watcher.pending:
                    async with agent.lock:
                        handed = True
                        await self._sync_locked(agent, changed=watcher.take())
                return None
            try:
                started = time.monotonic()
                stale = await asyncio.to_thread(is_stale, agent.store, agent.sources, self._ready_embedder())
                agent.check_seconds = time.monotonic() - started
            except agent.store.driver.module.DatabaseError as exc:
                if not is_corruption(exc):
                    raise
                await asyncio.to_thread(agent.store.reset, f"it is damaged ({exc})")
                stale = True
            if stale and not agent.lock.locked():
                async with agent.lock:
                    await self._sync_locked(agent)
        except (agent.store.driver.module.Error, OSError) as exc:
            if handed:
                watcher.look_at_everything()  # the changes it handed over are not in the index
            agent.last_error = f"The memory index could not be brought up to date ({exc}); searches answer from its last state."
            log.warning("memory: agent %s: %s", agent.id, agent.last_error)
            return f"The memory index could not be brought up to date ({exc}), so recent changes to the memory files may be missing."
        return None

    @staticmethod
    def _never_synced(agent: _Agent) -> bool:
        with agent.store.read() as conn:
            return get_meta(conn, "last_sync") is None

    # -- searching and reading ---------------------------------------------------------------

    async def search(self, query: str, *, agent_id: str, max_results: int | None = None, min_score: float | None = None) -> MemorySearch:
        from clawbot_memory.search import run_search

        agent = await self._agent(agent_id)
        driver = agent.store.driver
        embedder = self._ready_embedder()
        provider = getattr(embedder, "provider", None)
        model = getattr(embedder, "model", None)
        if not (query or "").strip():
            return MemorySearch(hits=(), mode=self._mode(driver, embedder is not None), provider=provider, model=model, notice="The query is empty.")
        query = query.strip()[:MAX_QUERY_CHARS]
        stale_notice = await self._freshen(agent)
        limit = max(1, min(100, max_results if max_results is not None else self.settings.max_results))
        floor = max(0.0, min(1.0, min_score if min_score is not None else self.settings.min_score))
        qvec = None
        notice = None
        if embedder is not None:
            try:
                qvec = await embedder.embed_query(query)
            except Exception as exc:
                agent.last_error = f"The embedder failed at a search ({embedder.describe()}): {exc}"
                notice = f"The embedder failed ({exc}), so this search matched words only."
                log.warning("memory: %s", agent.last_error)
        elif self._embedder_problem:
            notice = self._embedder_problem if not driver.fts5 else None
        if qvec is None and not driver.fts5:
            unavailable = notice or "Memory search is unavailable: no embedder and no FTS5."
            return MemorySearch(hits=(), mode="unavailable", provider=provider, model=model, notice=unavailable)

        def run() -> Any:
            return run_search(
                agent.store, self.settings, query, qvec=qvec, ident=getattr(embedder, "cache_key", ""), keyword=driver.fts5, max_results=limit, min_score=floor
            )

        try:
            hits = await asyncio.to_thread(run)
        except driver.module.DatabaseError as exc:
            if not is_corruption(exc):
                raise
            await asyncio.to_thread(agent.store.reset, f"it is damaged ({exc})")
            async with agent.lock:
                await self._sync_locked(agent)
            hits = await asyncio.to_thread(run)
        mode = self._mode(driver, qvec is not None)
        notice = " ".join(n for n in (stale_notice, notice) if n) or None
        if qvec is None:
            provider = model = None
        return MemorySearch(hits=tuple(hits), mode=mode, provider=provider, model=model, notice=notice)

    async def get(self, path: str, *, agent_id: str, from_line: int = 1, lines: int | None = None) -> MemoryExcerpt:
        agent = await self._agent(agent_id)
        file = agent.sources.resolve(path)
        return await asyncio.to_thread(read_lines, agent.sources, file, max(1, int(from_line or 1)), lines)

    # -- status and lifetime ------------------------------------------------------------------

    async def status(self, *, agent_id: str) -> MemoryStatus:
        from clawbot_memory.sync import is_stale, read_files

        agent = await self._agent(agent_id)
        driver = agent.store.driver
        embedder = self._ready_embedder()
        reasons = list(driver.reasons)
        if self._embedder_problem:
            reasons.append(self._embedder_problem)
        if agent.last_error:
            reasons.append(agent.last_error)
        exists = agent.store.path.exists()
        files = chunks = 0
        last_sync = None
        dirty = False
        if exists:
            with contextlib.suppress(Exception):
                await asyncio.to_thread(agent.store.open)

                def figures() -> tuple[int, int, str | None]:
                    with agent.store.read() as conn:
                        n_chunks = conn.execute("select count(*) from chunks").fetchone()[0]
                        return n_chunks, get_meta(conn, "last_sync")

                chunks, last_sync = await asyncio.to_thread(figures)
                files = sum(1 for row in (await asyncio.to_thread(read_files, agent.store)).values() if not row.skipped)
                dirty = await asyncio.to_thread(is_stale, agent.store, agent.sources, embedder)
        else:
            dirty = bool((await asyncio.to_thread(agent.sources.scan)).files)
        report = agent.last_report
        return MemoryStatus(
            provider=self.name,
            agent_id=agent_id,
            mode=self._mode(driver, embedder is not None),
            reasons=tuple(reasons),
            files=files,
            chunks=chunks,
            index_path=str(agent.store.path),
            index_bytes=agent.store.bytes_on_disk(),
            embedder=embedder.describe() if embedder is not None else None,
            vector_backend=driver.vector_backend if embedder is not None else None,
            keyword_backend=driver.keyword_backend,
            driver=driver.name,
            dirty=dirty,
            last_sync=last_sync,
            last_error=agent.last_error,
            watching=bool(agent.watcher is not None and agent.watcher.running),
            details={
                "workspace": str(agent.sources.workspace),
                "extra_paths": [str(p) for p in agent.sources.extra],
                "skipped": [list(s) for s in report.skipped] if report else [],
                "notices": list(agent.store.notices),
                "vectors_in_memory": _vectors_held(agent.store),
            },
        )

    async def start(self, *, agent_ids: Sequence[str]) -> None:
        """Index each agent's memory in the background, then watch it (``watch = true``)."""
        for agent_id in agent_ids:
            agent = await self._agent(agent_id)
            self._background.append(asyncio.create_task(self._start_one(agent), name=f"clawbot-memory-start-{agent_id}"))

    async def _start_one(self, agent: _Agent) -> None:
        try:
            await self.sync(agent_id=agent.id)
        except Exception:
            log.warning("memory: indexing agent %s at start failed", agent.id, exc_info=True)
        if self.settings.watch and agent.watcher is None:
            from clawbot_memory.watch import Watcher

            async def follow(changed: set[Path] | None) -> None:
                await self.sync(agent_id=agent.id, paths=changed)

            agent.watcher = Watcher(agent.sources, self.settings.watch_debounce_ms, follow)
            agent.watcher.start()

    async def close(self) -> None:
        for task in self._background:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._background.clear()
        for agent in self._agents.values():
            if agent.watcher is not None:
                await agent.watcher.stop()
                agent.watcher = None
            await asyncio.to_thread(agent.store.close)
        embedder, self._embedder_to_close = self._embedder_to_close, None
        if embedder is not None:
            with contextlib.suppress(Exception):
                await embedder.close()


def _vectors_held(store: Store) -> str:
    """What the in-memory copy of the vectors takes, for status."""
    cache = store.vector_cache
    held = cache.bytes() if hasattr(cache, "bytes") else 0
    return f"{held / 1_048_576:.1f} MB" if held else "none"
