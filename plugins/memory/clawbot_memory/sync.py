"""Bring one agent's index up to date with its Markdown.

Incremental: a file whose size and mtime are unchanged is not read; one whose hash is
unchanged is not chunked again; a chunk text whose vector is in the embedding cache is not
embedded again. Vectors are computed first (each batch stored in the cache as it comes);
then every change to files, chunks, FTS and vectors is written in ONE transaction, so a
search running meanwhile answers from the last complete state, never from half a sync.
An embedder that fails leaves the new chunks without vectors (still found by keyword) and
they are embedded at the next sync.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
import time
from collections.abc import Callable, Collection, Sequence
from pathlib import Path
from typing import Any

import attrs
from clawbot.types import MemoryPathError, MemorySyncProgress, MemorySyncReport

from clawbot_memory.chunking import Chunk, chunk_markdown, text_hash
from clawbot_memory.config import MemorySettings
from clawbot_memory.sources import MAX_FILE_BYTES, MemoryFile, Sources
from clawbot_memory.store import Store, get_meta, set_meta
from clawbot_memory.sync_vectors import attach_vectors, embed_identity, embed_missing, load_vectors
from clawbot_memory.vectors import vectors_of

log = logging.getLogger(__name__)


@attrs.frozen
class FileRow:
    source: str
    hash: str
    mtime: int
    size: int
    skipped: str | None


@attrs.define
class Prepared:
    """What the sync found for one file on disk."""

    file: MemoryFile
    mtime: int
    size: int
    hash: str = ""
    chunks: list[Chunk] = attrs.field(factory=list)
    skipped: str | None = None
    changed: bool = True  # False: only mtime moved, the content (hash) is the same


def read_files(store: Store, paths: Collection[str] | None = None) -> dict[str, FileRow]:
    """The index's rows of every file, or of ``paths`` only."""
    with store.read() as conn:
        if paths is None:
            rows = conn.execute("select path, source, hash, mtime, size, skipped from files").fetchall()
        else:
            wanted = list(paths)
            rows = []
            for i in range(0, len(wanted), 500):
                part = wanted[i : i + 500]
                marks = ",".join("?" * len(part))
                rows.extend(conn.execute(f"select path, source, hash, mtime, size, skipped from files where path in ({marks})", part))
    return {row[0]: FileRow(*row[1:]) for row in rows}


def _stat(file: MemoryFile) -> tuple[int, int] | None:
    try:
        st = os.stat(file.full)
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size


def is_stale(store: Store, sources: Sources, embedder: Any) -> bool:
    """Cheap: stats only. Files added, removed or touched, or a different embedder."""
    known = read_files(store)
    scan = sources.scan()
    if {f.path for f in scan.files} != set(known):
        return True
    for file in scan.files:
        row = known[file.path]
        if _stat(file) != (row.mtime, row.size):
            return True
    with store.read() as conn:
        if get_meta(conn, "sources") != sources.identity():
            return True
        return (get_meta(conn, "embedded_with") or "") != embed_identity(embedder)


def _indexed_elsewhere(store: Store, sources: Sources) -> bool:
    with store.read() as conn:
        indexed = get_meta(conn, "sources")
        return indexed != sources.identity() and conn.execute("select 1 from files limit 1").fetchone() is not None


def _prepare(sources: Sources, file: MemoryFile, row: FileRow | None, force: bool, settings: MemorySettings) -> Prepared | None:
    """None: unchanged. Otherwise the file's new state (chunks, or why it is skipped)."""
    stat = _stat(file)
    if stat is None:
        return Prepared(file=file, mtime=0, size=0, skipped="it could not be read (it vanished or is not accessible)")
    mtime, size = stat
    if not force and row is not None and (row.mtime, row.size) == (mtime, size):
        return None
    prepared = Prepared(file=file, mtime=mtime, size=size)
    if size > MAX_FILE_BYTES:
        prepared.skipped = f"it is larger than {MAX_FILE_BYTES // (1024 * 1024)} MB"
        return prepared
    try:
        with sources.open(file) as handle:
            data = handle.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        prepared.skipped = f"it could not be read ({exc.strerror or exc})"
        return prepared
    except MemoryPathError as exc:
        prepared.skipped = "it " + str(exc).removeprefix(file.path).strip()
        return prepared
    if len(data) > MAX_FILE_BYTES:  # it grew since the stat
        prepared.skipped = f"it is larger than {MAX_FILE_BYTES // (1024 * 1024)} MB"
        return prepared
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        prepared.skipped = f"it is not UTF-8 text (byte {exc.start})"
        return prepared
    if "\x00" in text:
        prepared.skipped = "it is binary, not Markdown (it contains NUL bytes)"
        return prepared
    prepared.hash = text_hash(text)
    if not force and row is not None and row.skipped is None and row.hash == prepared.hash:
        prepared.changed = False
        return prepared
    prepared.chunks = chunk_markdown(text, chunk_tokens=settings.chunk_tokens, overlap_tokens=settings.overlap_tokens)
    return prepared


def _write(store: Store, prepared: Sequence[Prepared], removed: Sequence[str], embedder: Any, sources: Sources) -> tuple[int, int]:
    """The one transaction that makes the sync visible: (chunks in the index, files)."""
    vec = store.driver.vec_version is not None
    now = int(time.time())
    removed_ids: list[int] = []
    follows = None
    with store.write() as conn:
        gone = list(removed) + [p.file.path for p in prepared if p.changed]
        for path in gone:
            ids = [r[0] for r in conn.execute("select id from chunks where path = ?", (path,))]
            removed_ids.extend(ids)
            conn.execute("delete from chunks where path = ?", (path,))
            if vec and ids and get_meta(conn, "vec_model"):
                conn.executemany("delete from chunks_vec where rowid = ?", [(i,) for i in ids])
        conn.executemany("delete from files where path = ?", [(p,) for p in removed])
        for p in prepared:
            if p.changed:
                conn.executemany(
                    "insert into chunks(path, source, start_line, end_line, hash, model, text, search_text, embedding, updated_at)"
                    " values (?, ?, ?, ?, ?, '', ?, ?, null, ?)",
                    [(p.file.path, p.file.source, c.start_line, c.end_line, c.hash, c.text, c.search_text, now) for c in p.chunks],
                )
            conn.execute(
                "insert or replace into files(path, source, hash, mtime, size, skipped) values (?, ?, ?, ?, ?, ?)",
                (p.file.path, p.file.source, p.hash, p.mtime, p.size, p.skipped),
            )
        if embedder is not None:
            attach_vectors(conn, embedder, vec)
        set_meta(conn, "embedded_with", embed_identity(embedder))
        set_meta(conn, "sources", sources.identity())
        set_meta(conn, "last_sync", time.strftime("%Y-%m-%dT%H:%M:%S%z"))
        before = get_meta(conn, "generation") or "0"
        generation = str(int(before) + 1)
        set_meta(conn, "generation", generation)
        if embedder is not None:
            # the in-memory vectors follow this change, published once it is committed
            index, ident = vectors_of(store), embed_identity(embedder)
            if index.get(before, ident) is not None:
                added = [r[0] for r in conn.execute("select id from pending")]
                follows = index.follow(conn, before, generation, ident, removed_ids, added)
        chunks = conn.execute("select count(*) from chunks").fetchone()[0]
        files = conn.execute("select count(*) from files where skipped is null").fetchone()[0]
    if follows is not None:
        vectors_of(store).publish(follows)
    return chunks, files


async def sync_index(
    store: Store,
    sources: Sources,
    settings: MemorySettings,
    embedder: Any,
    *,
    force: bool = False,
    progress: Callable[[MemorySyncProgress], None] | None = None,
    changed: Collection[Path] | None = None,
) -> tuple[MemorySyncReport, str | None]:
    """(the report, the embedder's failure as a sentence or None). ``changed``: the paths
    the watcher saw change, so only those are looked at (unless only a full scan can tell
    what they mean); None: every memory file is checked."""
    started = time.monotonic()
    await asyncio.to_thread(store.open)
    if not force:
        # an index of other folders (the agent's workspace moved) may hold same-named files
        # of the same size and time: every file is read again, nothing is trusted by its stat
        force = await asyncio.to_thread(_indexed_elsewhere, store, sources)
    look = None if changed is None or force else await asyncio.to_thread(_look_at_changes, store, sources, changed)
    if look is None:
        known = await asyncio.to_thread(read_files, store)
        scan = await asyncio.to_thread(sources.scan)
        on_disk = {f.path for f in scan.files}
        removed = [path for path in known if path not in on_disk]
        files, skipped = scan.files, list(scan.skipped)
    else:
        files, removed, known = look
        skipped = await asyncio.to_thread(_skipped_before, store, {f.path for f in files} | set(removed))
    loop = asyncio.get_running_loop()

    def tell(done: int, path: str) -> None:
        try:
            progress(MemorySyncProgress(done=done, total=len(files), path=path))
        except Exception:  # a progress display that breaks does not stop the indexing
            log.warning("memory: the sync progress callback failed", exc_info=True)

    def prepare_all() -> tuple[list[Prepared], int]:
        # one worker thread for the whole walk: a hop to a thread per file cost more than
        # the stat it wraps once memory has thousands of files
        found_all: list[Prepared] = []
        unchanged = 0
        for done, file in enumerate(files, 1):
            row = known.get(file.path)
            found = _prepare(sources, file, row, force, settings)
            if found is None:
                unchanged += 1
                if row is not None and row.skipped:
                    skipped.append((file.path, row.skipped))
            else:
                found_all.append(found)
                if found.skipped:
                    log.warning("memory: skipped %s: %s", file.full, found.skipped)
                    skipped.append((file.path, found.skipped))
                elif not found.changed:
                    unchanged += 1
            if progress is not None:
                # told on the event loop's thread, and waited for: what the display (or a
                # test racing the indexer) sees is the file just read, not one further on
                told = threading.Event()
                loop.call_soon_threadsafe(lambda done=done, path=file.path, told=told: (tell(done, path), told.set()))
                told.wait()
        return found_all, unchanged

    prepared, unchanged = await asyncio.to_thread(prepare_all)

    embedded = cache_hits = 0
    error: str | None = None
    if embedder is not None:
        texts = await asyncio.to_thread(_texts_needing_vectors, store, prepared, removed, embedder)
        embedded, cache_hits, error = await embed_missing(store, embedder, texts)
    chunks, _files = await asyncio.to_thread(_write, store, prepared, removed, embedder, sources)
    if embedder is not None:
        await asyncio.to_thread(load_vectors, store, embedder)
    if prepared or removed or embedded:
        await asyncio.to_thread(store.checkpoint)
    report = MemorySyncReport(
        files_indexed=sum(1 for p in prepared if p.changed and not p.skipped),
        files_unchanged=unchanged,
        files_removed=len(removed),
        chunks=chunks,
        embedded=embedded,
        cache_hits=cache_hits,
        skipped=tuple(skipped),
        seconds=time.monotonic() - started,
    )
    return report, error


def _skipped_before(store: Store, leave_out: set[str]) -> list[tuple[str, str]]:
    """Files the index already skips (named again in a report that looked only at changes)."""
    with store.read() as conn:
        rows = conn.execute("select path, skipped from files where skipped is not null").fetchall()
    return [(path, why) for path, why in rows if path not in leave_out]


def _look_at_changes(store: Store, sources: Sources, changed: Collection[Path]) -> tuple[list[MemoryFile], list[str], dict[str, FileRow]] | None:
    """(files to prepare, paths removed, their index rows) for the watcher's changed paths,
    or None when a full scan is needed."""
    paths = {sources.display(Path(os.path.abspath(p))) for p in changed}
    known = read_files(store, paths)
    found = sources.changed(changed, known)
    if found is None:
        return None
    files, gone, vanished = found
    if vanished:
        with store.read() as conn:
            for name in vanished:  # a folder that went: its files are gone too, and only a scan lists them
                if conn.execute("select 1 from files where path > ? and path < ? limit 1", (name + "/", name + "0")).fetchone():
                    return None
    return files, gone, known


def _texts_needing_vectors(store: Store, prepared: Sequence[Prepared], removed: Sequence[str], embedder: Any) -> dict[str, str]:
    """hash -> text of every chunk that will lack a vector for this embedder after the sync."""
    texts: dict[str, str] = {}
    for p in prepared:
        for chunk in p.chunks:
            texts.setdefault(chunk.hash, chunk.text)
    replaced = set(removed) | {p.file.path for p in prepared if p.changed}
    with store.read() as conn:
        rows = conn.execute("select path, hash, text from chunks where model < :ident or model > :ident", {"ident": embed_identity(embedder)}).fetchall()
    for path, digest, text in rows:
        if path not in replaced:
            texts.setdefault(digest, text)
    return texts
