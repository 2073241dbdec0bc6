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
import time
from collections.abc import Callable, Sequence
from typing import Any

import attrs
from clawbot.types import MemoryPathError, MemorySyncProgress, MemorySyncReport

from clawbot_memory.chunking import Chunk, chunk_markdown, text_hash
from clawbot_memory.config import MemorySettings
from clawbot_memory.sources import MAX_FILE_BYTES, MemoryFile, Sources
from clawbot_memory.store import Store, get_meta, set_meta

log = logging.getLogger(__name__)

#: Characters of a chunk the embedder sees: a chunk made of one huge line is cut, its
#: whole text stays searchable by keyword.
EMBED_CHARS = 8000
#: Texts handed to the embedder at once (it batches by tokens inside).
EMBED_GROUP = 256


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


def embed_identity(embedder: Any) -> str:
    return f"{embedder.cache_key}" if embedder is not None else ""


def read_files(store: Store) -> dict[str, FileRow]:
    with store.read() as conn:
        rows = conn.execute("select path, source, hash, mtime, size, skipped from files").fetchall()
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


async def _embed_missing(store: Store, embedder: Any, texts_by_hash: dict[str, str]) -> tuple[int, int, str | None]:
    """Vectors for the texts the cache lacks, stored in the cache: (embedded, cache hits, error)."""
    import numpy

    key, model, provider = embedder.cache_key, embedder.model, embedder.provider
    hashes = list(texts_by_hash)

    def cached() -> set[str]:
        found: set[str] = set()
        with store.read() as conn:
            for i in range(0, len(hashes), 500):
                part = hashes[i : i + 500]
                marks = ",".join("?" * len(part))
                found.update(
                    r[0]
                    for r in conn.execute(f"select hash from embedding_cache where provider_key = ? and model = ? and hash in ({marks})", (key, model, *part))
                )
        return found

    have = await asyncio.to_thread(cached)
    missing = [h for h in hashes if h not in have]
    embedded = 0
    for i in range(0, len(missing), EMBED_GROUP):
        group = missing[i : i + EMBED_GROUP]
        try:
            vectors = await embedder.embed_documents([texts_by_hash[h][:EMBED_CHARS] for h in group])
            vectors = numpy.asarray(vectors, dtype=numpy.float32)
            if vectors.ndim != 2 or vectors.shape[0] != len(group):
                raise ValueError(f"the embedder returned {vectors.shape} for {len(group)} texts")
        except Exception as exc:
            log.warning("memory: embedding failed: %s", exc)
            return embedded, len(have), f"The embedder failed ({embedder.describe()}): {exc}"
        now = int(time.time())
        rows = [(provider, model, key, h, vec.tobytes(), int(vectors.shape[1]), now) for h, vec in zip(group, vectors, strict=True)]

        def store_rows(rows: list[tuple] = rows) -> None:
            with store.write() as conn:
                conn.executemany(
                    "insert or replace into embedding_cache(provider, model, provider_key, hash, embedding, dims, updated_at) values (?, ?, ?, ?, ?, ?, ?)",
                    rows,
                )

        await asyncio.to_thread(store_rows)
        embedded += len(group)
    return embedded, len(have), None


def _write(store: Store, prepared: Sequence[Prepared], removed: Sequence[str], embedder: Any, sources: Sources) -> tuple[int, int]:
    """The one transaction that makes the sync visible: (chunks in the index, files)."""
    vec = store.driver.vec_version is not None
    now = int(time.time())
    with store.write() as conn:
        gone = list(removed) + [p.file.path for p in prepared if p.changed]
        for path in gone:
            ids = [r[0] for r in conn.execute("select id from chunks where path = ?", (path,))]
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
            _attach_vectors(conn, embedder, vec)
        set_meta(conn, "embedded_with", embed_identity(embedder))
        set_meta(conn, "sources", sources.identity())
        set_meta(conn, "last_sync", time.strftime("%Y-%m-%dT%H:%M:%S%z"))
        generation = int(get_meta(conn, "generation") or 0) + 1
        set_meta(conn, "generation", str(generation))
        chunks = conn.execute("select count(*) from chunks").fetchone()[0]
        files = conn.execute("select count(*) from files where skipped is null").fetchone()[0]
    return chunks, files


def _attach_vectors(conn: Any, embedder: Any, vec: bool) -> None:
    """Cached vectors onto the chunks that lack one for this embedder, and chunks_vec in step
    (dropped and recreated when the embedder or the dimensions changed)."""
    ident = embed_identity(embedder)
    args = {"key": embedder.cache_key, "model": embedder.model, "ident": ident}
    conn.execute("create temp table if not exists pending(id integer primary key)")
    conn.execute("delete from pending")
    # a chunk lacks this embedder's vector exactly when its model is another (a chunk without
    # any vector has model ''); written as two ranges so the model index answers it
    conn.execute("insert into pending select id from chunks where model < :ident or model > :ident", args)
    conn.execute(
        """update chunks set
               embedding = (select e.embedding from embedding_cache e where e.provider_key = :key and e.model = :model and e.hash = chunks.hash),
               model = :ident
           where id in (select id from pending)
             and exists (select 1 from embedding_cache e where e.provider_key = :key and e.model = :model and e.hash = chunks.hash)""",
        args,
    )
    if not vec:
        return
    row = conn.execute("select dims from embedding_cache where provider_key = :key and model = :model limit 1", args).fetchone()
    if row is None:
        return
    dims = int(row[0])
    if get_meta(conn, "vec_model") != ident or get_meta(conn, "vec_dims") != str(dims):
        conn.execute("drop table if exists chunks_vec")
        conn.execute(f"create virtual table chunks_vec using vec0(embedding float[{dims}] distance_metric=cosine)")
        conn.execute("insert into chunks_vec(rowid, embedding) select id, embedding from chunks where model = :ident and embedding is not null", args)
        set_meta(conn, "vec_model", ident)
        set_meta(conn, "vec_dims", str(dims))
    else:
        conn.execute(
            "insert into chunks_vec(rowid, embedding) select c.id, c.embedding from chunks c join pending p on p.id = c.id"
            " where c.model = :ident and c.embedding is not null",
            args,
        )


async def sync_index(
    store: Store,
    sources: Sources,
    settings: MemorySettings,
    embedder: Any,
    *,
    force: bool = False,
    progress: Callable[[MemorySyncProgress], None] | None = None,
) -> tuple[MemorySyncReport, str | None]:
    """(the report, the embedder's failure as a sentence or None)."""
    started = time.monotonic()
    await asyncio.to_thread(store.open)
    known = await asyncio.to_thread(read_files, store)
    if not force:
        # an index of other folders (the agent's workspace moved) may hold same-named files
        # of the same size and time: every file is read again, nothing is trusted by its stat
        force = await asyncio.to_thread(_indexed_elsewhere, store, sources)
    scan = await asyncio.to_thread(sources.scan)
    on_disk = {f.path for f in scan.files}
    removed = [path for path in known if path not in on_disk]
    prepared: list[Prepared] = []
    skipped = list(scan.skipped)
    unchanged = 0
    for done, file in enumerate(scan.files, 1):
        row = known.get(file.path)
        found = await asyncio.to_thread(_prepare, sources, file, row, force, settings)
        if found is None:
            unchanged += 1
            if row is not None and row.skipped:
                skipped.append((file.path, row.skipped))
        else:
            prepared.append(found)
            if found.skipped:
                log.warning("memory: skipped %s: %s", file.full, found.skipped)
                skipped.append((file.path, found.skipped))
            elif not found.changed:
                unchanged += 1
        if progress is not None:
            try:
                progress(MemorySyncProgress(done=done, total=len(scan.files), path=file.path))
            except Exception:  # a progress display that breaks does not stop the indexing
                log.warning("memory: the sync progress callback failed", exc_info=True)

    embedded = cache_hits = 0
    error: str | None = None
    if embedder is not None:
        texts = await asyncio.to_thread(_texts_needing_vectors, store, prepared, removed, embedder)
        embedded, cache_hits, error = await _embed_missing(store, embedder, texts)
    chunks, _files = await asyncio.to_thread(_write, store, prepared, removed, embedder, sources)
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
