"""Keyword and vector candidates merged into one ranking.

Each side's raw scores are put on one scale per query before they are weighed: bm25 and
cosine have no common unit (bm25 grows with the number and rarity of matched words, a cosine
of 0.4 can be the best or the worst hit depending on the question), so each side is min-max
normalised over its own candidates (its best hit 1, its weakest 0) and the two are mixed with
the configured weights. When the keyword side holds every chunk that matched a word (a small
memory: fewer matches than candidates asked for), its weakest is still a match, so its scale
starts at 0 instead: otherwise the second of two good notes would score 0 there and fall under
min_score. A chunk found by one side only gets 0 from the other. When a side
has no candidates at all (keyword-only or vector-only mode, or nothing matched) the other
side's weight is the whole score, so a lone side still ranks 0..1.

The keyword side also looks at where the words are: a chunk where one line holds most of
the question's words (the turn that answers it) beats one where they are scattered over
thirteen lines. Its words score is bm25 mixed (LINE_SHARE) with the score of its best line:
the sum of the matched words' weights, a word weighing more the fewer candidates hold it.
On LoCoMo this moved the hybrid's recall@1/3/6 up by about half a point each.

The reference's text score, 1/(1+max(0, rank)), is 1 for every hit (FTS5's bm25 is
negative, lower is better), so it only said "matched a word" and let the vector side order
everything; measured on LoCoMo that made the hybrid worse than bm25 alone.
"""

from __future__ import annotations

import math
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
    lines: tuple[frozenset[str], ...] = ()  # per line, the question's words it holds (query.matched_lines); (): unknown


@attrs.frozen
class Scored:
    candidate: Candidate
    score: float  # in [0, 1], comparable to min_score


def _finite(x: float | None) -> float | None:
    return x if x is not None and math.isfinite(x) else None


def _normalised(raw: Sequence[float | None], floor: float | None = None) -> list[float]:
    """Min-max over one side's candidates: best 1, weakest 0 (or ``floor`` 0); all equal (or
    one): 1 each. A missing or non-finite raw score counts as the weakest."""
    known = [x for x in raw if x is not None]
    if not known:
        return [0.0] * len(raw)
    lo, hi = min(known), max(known)
    if floor is not None:
        lo = min(lo, floor)
    if hi <= lo:
        return [1.0 if x is not None else 0.0 for x in raw]
    return [(x - lo) / (hi - lo) if x is not None else 0.0 for x in raw]


#: Share of a keyword candidate's words score that comes from its best line (the rest: bm25).
LINE_SHARE = 0.3


def _best_lines(cands: Sequence[Candidate]) -> list[float | None]:
    """Per candidate: the weight of the question's words on its best line. A word's weight
    is its rarity among these candidates (bm25's idf over the pool), so a name said in
    every chunk counts little and the thing asked about counts much."""
    n = len(cands)
    held: dict[str, int] = {}
    for c in cands:
        for word in frozenset().union(*c.lines):
            held[word] = held.get(word, 0) + 1
    idf = {w: math.log(1 + (n - d + 0.5) / (d + 0.5)) for w, d in held.items()}
    return [max((sum(idf[w] for w in line) for line in c.lines), default=0.0) if c.lines else None for c in cands]


def _words_scores(keyword: Sequence[Candidate], floor: float | None) -> list[float]:
    bm25 = _normalised([-x if (x := _finite(c.keyword_rank)) is not None else None for c in keyword], floor=floor)
    if not any(c.lines for c in keyword):  # where the words are is not known: bm25 alone
        return bm25
    lines = _normalised(_best_lines(keyword))
    return [(1 - LINE_SHARE) * b + LINE_SHARE * line for b, line in zip(bm25, lines, strict=True)]


def fuse(
    query: str,
    keyword: Sequence[Candidate],
    vector: Sequence[Candidate],
    *,
    max_results: int,
    min_score: float,
    vector_weight: float,
    text_weight: float,
    every_keyword_match: bool = False,
) -> list[Scored]:
    """keyword: best first (bm25 order); vector: best first. Either may be empty (a mode
    without that side). ``every_keyword_match``: the keyword side was not cut at the candidate
    limit. Returns at most max_results, best first, score >= min_score."""
    del query  # the ranking needs only the two sides' scores
    if max_results <= 0:
        return []
    sides: list[tuple[float, Sequence[Candidate], list[float]]] = []
    if keyword:
        sides.append((max(0.0, text_weight), keyword, _words_scores(keyword, floor=0.0 if every_keyword_match else None)))
    if vector:
        sides.append((max(0.0, vector_weight), vector, _normalised([_finite(c.vector_similarity) for c in vector])))
    total = sum(w for w, _, _ in sides)
    merged: dict[int, Candidate] = {}
    scores: dict[int, float] = {}
    first_seen: dict[int, int] = {}  # ties: the order the sides gave, keyword first
    for weight, cands, norm in sides:
        share = weight / total if total > 0 else 1.0 / len(sides)
        seen: set[int] = set()
        for cand, value in zip(cands, norm, strict=True):
            cid = cand.chunk_id
            if cid in seen:  # listed twice by one side: its best place counts
                continue
            seen.add(cid)
            if cid in merged:  # found by both sides: one candidate that carries both raw scores
                old = merged[cid]
                merged[cid] = attrs.evolve(
                    old,
                    keyword_rank=old.keyword_rank if old.keyword_rank is not None else cand.keyword_rank,
                    vector_similarity=old.vector_similarity if old.vector_similarity is not None else cand.vector_similarity,
                )
                scores[cid] = scores[cid] + share * value if cid in scores else share * value
            else:
                merged[cid] = cand
                scores[cid] = share * value
                first_seen[cid] = len(first_seen)
    ranked = sorted(scores, key=lambda cid: (-scores[cid], first_seen[cid]))
    out: list[Scored] = []
    for cid in ranked:
        score = min(1.0, max(0.0, scores[cid]))
        if score < min_score or len(out) >= max_results:
            break
        out.append(Scored(merged[cid], score))
    return out


__all__ = ["LINE_SHARE", "Candidate", "Scored", "fuse"]
