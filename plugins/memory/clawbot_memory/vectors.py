"""The vectors of one agent's index held in memory, for the query-time scan.

A search compares the query with every stored vector. In process this is one float32
matrix-vector product (about 10 ms for 100,000 x 384 on two cores) where sqlite-vec's exact
KNN over its ``vec0`` table takes 60-80 ms (docs/benchmarks.md, "Memory index at scale"),
so the matrix answers every search and ``vec0`` stays the vectors' store in the file.

The matrix follows the index by *snapshots*, one per committed sync (the ``generation`` in
``meta``). A sync derives the next snapshot from the one before by appending its new rows
and masking its removed ones, so an edit costs the changed rows, not a reload; a search
uses the snapshot of the generation its read transaction sees, so it answers from one
complete state even while a sync commits the next. Rows are only ever appended to the
shared arrays (a snapshot sees its own first ``n``), and when removed rows pile up the
matrix is compacted into fresh arrays. Memory: 4 bytes x dims per chunk, plus headroom.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

import attrs

from clawbot_memory.store import Store, get_meta

#: Snapshots kept: the newest, and the one a search that began before the last commit reads.
KEEP = 2
#: Compact when this share of the rows are removed ones, and at least COMPACT_MIN of them
#: (below that a few masked rows cost less than copying).
DEAD_SHARE = 0.25
COMPACT_MIN = 512
#: A stored vector is packed float32.
FLOAT32_BYTES = 4


@attrs.define(eq=False)
class _Rows:
    """Append-only arrays shared by the snapshots derived from one load."""

    ids: Any  # numpy int64 (capacity,)
    vectors: Any  # numpy float32 (capacity, dims)
    used: int


@attrs.frozen(eq=False)
class Snapshot:
    """The vectors of one committed state: the first ``n`` rows of ``rows``, minus ``dead``."""

    generation: str
    ident: str
    rows: _Rows
    n: int
    dead: Any = None  # numpy bool (n,), True = removed since loading; None: none removed
    dead_count: int = 0

    @property
    def size(self) -> int:
        return self.n - self.dead_count

    def top(self, query: Any, k: int) -> list[tuple[int, float]]:
        """(chunk id, cosine similarity) of the ``k`` nearest rows, best first."""
        import numpy

        if self.size <= 0 or k <= 0:
            return []
        sims = self.rows.vectors[: self.n] @ query
        if self.dead is not None:
            sims[self.dead] = -numpy.inf
        k = min(k, self.size)
        top = numpy.argpartition(-sims, k - 1)[:k]
        top = top[numpy.argsort(-sims[top], kind="stable")]
        ids = self.rows.ids
        return [(int(ids[i]), float(sims[i])) for i in top]


class VectorIndex:
    """The snapshots of one store (``Store.vector_cache``); safe across the sync's and the
    searches' threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._snapshots: dict[str, Snapshot] = {}

    def bytes(self) -> int:
        """Memory held by the arrays (shared arrays counted once)."""
        with self._lock:
            seen = {id(s.rows): s.rows for s in self._snapshots.values()}
        return sum(r.ids.nbytes + r.vectors.nbytes for r in seen.values())

    def get(self, generation: str, ident: str) -> Snapshot | None:
        with self._lock:
            snap = self._snapshots.get(generation)
        return snap if snap is not None and snap.ident == ident else None

    def get_newest(self) -> Snapshot | None:
        with self._lock:
            return self._snapshots[max(self._snapshots, key=_order)] if self._snapshots else None

    def snapshot(self, conn: Any, ident: str) -> Snapshot | None:
        """The snapshot of the state ``conn``'s open transaction sees, loaded from it when
        missing (the first search, or after another process wrote the index)."""
        generation = get_meta(conn, "generation") or "0"
        found = self.get(generation, ident)
        if found is not None:
            return found
        snap = load(conn, generation, ident)
        if snap is not None:
            self._publish(snap)
        return snap

    def _publish(self, snap: Snapshot) -> None:
        with self._lock:
            self._snapshots[snap.generation] = snap
            for old in sorted(self._snapshots, key=_order)[:-KEEP]:
                del self._snapshots[old]

    def follow(self, conn: Any, before: str, after: str, ident: str, removed: Sequence[int], added_ids: Sequence[int]) -> Snapshot | None:
        """Inside the sync's write transaction, before its commit: the snapshot of the state
        being committed, derived from ``before``'s (None: there is none to derive from; the
        next search loads one). Publish it with :meth:`publish` once the commit succeeded."""
        import numpy

        base = self.get(before, ident)
        if base is None:
            return None
        dead = base.dead.copy() if base.dead is not None else numpy.zeros(base.n, dtype=bool)
        if len(removed):
            dead |= numpy.isin(base.rows.ids[: base.n], numpy.asarray(removed, dtype=numpy.int64))
        rows, n = base.rows, base.n
        fetched = _fetch(conn, list(added_ids), ident) if added_ids else None
        if fetched is not None and len(fetched[0]):
            ids, vectors = fetched
            if vectors.shape[1] != rows.vectors.shape[1]:
                return None  # other dimensions: the next search loads them whole
            if rows.used != n or n + len(ids) > rows.ids.shape[0]:
                rows = _grow(rows, n, dead, len(ids))
                dead = numpy.zeros(rows.used, dtype=bool)
                n = rows.used
            rows.ids[n : n + len(ids)] = ids
            rows.vectors[n : n + len(ids)] = vectors
            rows.used = n + len(ids)
            dead = numpy.concatenate([dead, numpy.zeros(len(ids), dtype=bool)])
            n += len(ids)
        dead_count = int(dead.sum())
        if dead_count > max(COMPACT_MIN, DEAD_SHARE * n):
            rows = _grow(rows, n, dead, 0)
            n, dead, dead_count = rows.used, numpy.zeros(rows.used, dtype=bool), 0
        return Snapshot(generation=after, ident=ident, rows=rows, n=n, dead=dead if dead_count else None, dead_count=dead_count)

    def publish(self, snap: Snapshot | None) -> None:
        if snap is not None:
            self._publish(snap)


def vectors_of(store: Store) -> VectorIndex:
    """The store's in-memory vectors (created on first use; a store moved aside drops them)."""
    cache = store.vector_cache
    if not isinstance(cache, VectorIndex):
        cache = store.vector_cache = VectorIndex()
    return cache


def _order(generation: str) -> int:
    try:
        return int(generation)
    except ValueError:
        return -1


def _headroom(n: int) -> int:
    return n + max(256, n // 16)


def load(conn: Any, generation: str, ident: str) -> Snapshot | None:
    """Every vector of ``ident`` in the state ``conn`` reads, read in batches (the peak is the
    matrix plus one batch, not every blob at once)."""
    import numpy

    where = "from chunks where model = ? and embedding is not null"
    total = conn.execute(f"select count(*) {where}", (ident,)).fetchone()[0]
    first = conn.execute(f"select embedding {where} limit 1", (ident,)).fetchone()
    if not total or first is None:
        return None
    dims = len(first[0]) // FLOAT32_BYTES
    capacity = _headroom(total)
    ids = numpy.zeros(capacity, dtype=numpy.int64)
    vectors = numpy.zeros((capacity, dims), dtype=numpy.float32)
    n = 0
    cursor = conn.execute(f"select id, embedding {where} and length(embedding) = ?", (ident, dims * FLOAT32_BYTES))
    while batch := cursor.fetchmany(4096):
        ids[n : n + len(batch)] = [r[0] for r in batch]
        vectors[n : n + len(batch)] = numpy.frombuffer(b"".join(r[1] for r in batch), dtype=numpy.float32).reshape(len(batch), dims)
        n += len(batch)
    return Snapshot(generation=generation, ident=ident, rows=_Rows(ids=ids, vectors=vectors, used=n), n=n)


def _fetch(conn: Any, ids: list[int], ident: str) -> tuple[Any, Any]:
    import numpy

    found: list[tuple[int, bytes]] = []
    for i in range(0, len(ids), 500):
        part = ids[i : i + 500]
        marks = ",".join("?" * len(part))
        found.extend(conn.execute(f"select id, embedding from chunks where id in ({marks}) and model = ? and embedding is not null", (*part, ident)))
    if not found:
        return numpy.zeros(0, dtype=numpy.int64), numpy.zeros((0, 0), dtype=numpy.float32)
    dims = len(found[0][1]) // FLOAT32_BYTES
    found = [r for r in found if len(r[1]) == dims * FLOAT32_BYTES]
    ids_out = numpy.fromiter((r[0] for r in found), dtype=numpy.int64, count=len(found))
    return ids_out, numpy.frombuffer(b"".join(b for _, b in found), dtype=numpy.float32).reshape(len(found), dims)


def _grow(rows: _Rows, n: int, dead: Any, more: int) -> _Rows:
    """Fresh arrays holding the live rows of the first ``n``, with room for ``more``."""
    import numpy

    keep = ~dead[:n]
    live = int(keep.sum())
    capacity = _headroom(live + more)
    ids = numpy.zeros(capacity, dtype=numpy.int64)
    vectors = numpy.zeros((capacity, rows.vectors.shape[1]), dtype=numpy.float32)
    ids[:live] = rows.ids[:n][keep]
    vectors[:live] = rows.vectors[:n][keep]
    return _Rows(ids=ids, vectors=vectors, used=live)
