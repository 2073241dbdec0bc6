"""One search over one agent's index: keyword candidates (FTS5, bm25) and vector candidates
(cosine over the in-memory vectors, vectors.py), merged by :func:`clawbot_memory.ranking.fuse`.

Every query of a search runs in one read transaction, so it sees one committed state even
while a sync is writing the next.
"""

from __future__ import annotations

import logging
from typing import Any

from clawbot.types import MemoryHit

from clawbot_memory.config import MemorySettings
from clawbot_memory.query import keyword_query, matched_lines, question_keys
from clawbot_memory.ranking import Candidate, Scored, fuse
from clawbot_memory.store import Store, is_corruption
from clawbot_memory.vectors import vectors_of

log = logging.getLogger(__name__)

_ROW = "c.id, c.path, c.start_line, c.end_line, c.text, c.source"


def _candidate(row: tuple, **scores: float) -> Candidate:
    return Candidate(chunk_id=row[0], path=row[1], start_line=row[2], end_line=row[3], text=row[4], **scores)


def keyword_candidates(conn: Any, query: str, limit: int) -> list[tuple[Candidate, str]]:
    match = keyword_query(query)
    if match is None:
        return []
    try:
        rows = conn.execute(
            f"select {_ROW}, bm25(chunks_fts) as rank from chunks_fts join chunks c on c.id = chunks_fts.rowid where chunks_fts match ? order by rank limit ?",
            (match, limit),
        ).fetchall()
    except Exception as exc:
        if is_corruption(exc):
            raise
        # an expression FTS5 cannot parse costs this search its keyword side, never the turn
        log.warning("memory: keyword search for %r failed: %s", match, exc)
        return []
    keys = question_keys(query)
    return [(_candidate(r, keyword_rank=float(r[6]), lines=matched_lines(keys, r[4])), r[5]) for r in rows]


def _rows_by_id(conn: Any, ids: list[int]) -> dict[int, tuple]:
    if not ids:
        return {}
    marks = ",".join("?" * len(ids))
    return {r[0]: r for r in conn.execute(f"select {_ROW} from chunks c where c.id in ({marks})", ids)}


def vector_candidates(store: Store, conn: Any, qvec: Any, ident: str, limit: int) -> list[tuple[Candidate, str]]:
    """The nearest chunks by cosine, from the in-memory vectors of the state ``conn`` reads
    (vectors.py says why not sqlite-vec's KNN)."""
    import numpy

    q = numpy.asarray(qvec, dtype=numpy.float32).reshape(-1)
    snap = vectors_of(store).snapshot(conn, ident)
    if snap is None or snap.rows.vectors.shape[1] != q.shape[0]:
        return []
    pairs = snap.top(q, limit)
    rows = _rows_by_id(conn, [i for i, _ in pairs])
    return [(_candidate(rows[i], vector_similarity=sim), rows[i][5]) for i, sim in pairs if i in rows]


def snippet(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    if space > limit * 0.8:
        cut = cut[:space]
    return cut.rstrip() + "\u2026"


def run_search(
    store: Store,
    settings: MemorySettings,
    query: str,
    *,
    qvec: Any,
    ident: str,
    keyword: bool,
    max_results: int,
    min_score: float,
) -> list[MemoryHit]:
    """Blocking: call it off the event loop. ``qvec`` None: no vector side; ``keyword``
    False: no keyword side."""
    limit = max_results * settings.candidate_multiplier
    with store.read() as conn:
        words = keyword_candidates(conn, query, limit) if keyword else []
        near = vector_candidates(store, conn, qvec, ident, limit) if qvec is not None else []
    sources = {c.chunk_id: s for c, s in words + near}
    scored: list[Scored] = fuse(
        query,
        [c for c, _ in words],
        [c for c, _ in near],
        max_results=max_results,
        min_score=min_score,
        vector_weight=settings.vector_weight,
        text_weight=settings.text_weight,
        every_keyword_match=len(words) < limit,
    )
    return [
        MemoryHit(
            path=s.candidate.path,
            start_line=s.candidate.start_line,
            end_line=s.candidate.end_line,
            score=round(float(s.score), 6),
            snippet=snippet(s.candidate.text, settings.snippet_chars),
            source=sources.get(s.candidate.chunk_id, "memory"),
        )
        for s in scored
    ]
