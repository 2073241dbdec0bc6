"""Keyword and vector candidates -> one ranking of hits with scores in [0, 1]."""

from __future__ import annotations

from collections.abc import Sequence

import attrs


@attrs.frozen
class Candidate:
    chunk_id: int
    path: str  # relative to the workspace, e.g. "memory/2023-05-08.md"
    start_line: int
    end_line: int
    text: str
    keyword_rank: float | None = None  # FTS5 bm25() of this chunk (lower is better); None: not a keyword candidate
    vector_similarity: float | None = None  # cosine similarity in [-1, 1]; None: not a vector candidate


@attrs.frozen
class Scored:
    candidate: Candidate
    score: float  # in [0, 1], comparable to min_score


def _text_score(rank: float) -> float:
    return 1.0 / (1.0 + max(0.0, rank))


def fuse(
    query: str,
    keyword: Sequence[Candidate],
    vector: Sequence[Candidate],
    *,
    max_results: int,
    min_score: float,
    vector_weight: float,
    text_weight: float,
) -> list[Scored]:
    """keyword: best first (bm25 order); vector: best first. Either may be empty (a mode
    without that side). Returns at most max_results, best first, score >= min_score.

    A weighted sum of the two sides joined by chunk (a side that did not find a chunk counts
    0); with one side empty the other's score stands alone, so keyword-only and vector-only
    searches are not held under min_score by the weight of the missing side.
    """
    if not keyword:
        vector_weight, text_weight = 1.0, 0.0
    elif not vector:
        vector_weight, text_weight = 0.0, 1.0
    merged: dict[int, list] = {}
    for cand in vector:
        merged[cand.chunk_id] = [cand, max(0.0, min(1.0, cand.vector_similarity or 0.0)), 0.0]
    for cand in keyword:
        entry = merged.setdefault(cand.chunk_id, [cand, 0.0, 0.0])
        entry[2] = _text_score(cand.keyword_rank if cand.keyword_rank is not None else 0.0)
    total = (vector_weight + text_weight) or 1.0
    scored = [Scored(candidate=c, score=(vector_weight * v + text_weight * t) / total) for c, v, t in merged.values()]
    scored = [s for s in scored if s.score >= min_score]
    scored.sort(key=lambda s: (-s.score, s.candidate.path, s.candidate.start_line))
    return scored[:max_results]
