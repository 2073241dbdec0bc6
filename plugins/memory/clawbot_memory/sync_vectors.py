"""The vectors a sync needs: each chunk text embedded once (the embedding cache), then
attached to its chunks and to ``chunks_vec`` inside the sync's one transaction."""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

from clawbot_memory.store import Store, get_meta, set_meta
from clawbot_memory.vectors import vectors_of

log = logging.getLogger(__name__)

#: Characters of a chunk the embedder sees: a chunk made of one huge line is cut, its
#: whole text stays searchable by keyword.
EMBED_CHARS = 8000
#: Texts handed to the embedder at once (it batches by tokens inside).
EMBED_GROUP = 256


def embed_identity(embedder: Any) -> str:
    return f"{embedder.cache_key}" if embedder is not None else ""


async def embed_missing(store: Store, embedder: Any, texts_by_hash: dict[str, str]) -> tuple[int, int, str | None]:
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


def load_vectors(store: Store, embedder: Any) -> None:
    """Hold the committed vectors in memory now (a no-op when they already are), so the
    first search after start does not pay for loading them."""
    with store.read() as conn:
        vectors_of(store).snapshot(conn, embed_identity(embedder))


def attach_vectors(conn: Any, embedder: Any, vec: bool) -> None:
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
            # pending first (CROSS JOIN keeps the order): led by the model index instead, this
            # read every vector of the index to add a few (90 ms at 100,000 chunks)
            "insert into chunks_vec(rowid, embedding) select c.id, c.embedding from pending p cross join chunks c on c.id = p.id"
            " where c.model = :ident and c.embedding is not null",
            args,
        )
