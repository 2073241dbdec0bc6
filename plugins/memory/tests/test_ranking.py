"""Keyword and vector candidates merged into one ranking: order, scale, empty sides, ties."""

from __future__ import annotations

import math

import pytest
from clawbot_memory.ranking import Candidate, fuse
from hypothesis import given, settings
from hypothesis import strategies as st


def kw(cid: int, rank: float) -> Candidate:
    return Candidate(chunk_id=cid, path=f"memory/{cid}.md", start_line=1, end_line=5, text=f"chunk {cid}", keyword_rank=rank)


def vec(cid: int, sim: float) -> Candidate:
    return Candidate(chunk_id=cid, path=f"memory/{cid}.md", start_line=1, end_line=5, text=f"chunk {cid}", vector_similarity=sim)


def run(keyword, vector, *, max_results=6, min_score=0.0, vw=0.3, tw=0.7):
    return [
        (s.candidate.chunk_id, round(s.score, 4))
        for s in fuse("q", keyword, vector, max_results=max_results, min_score=min_score, vector_weight=vw, text_weight=tw)
    ]


@pytest.mark.parametrize(
    ("keyword", "vector", "kwargs", "expected"),
    [
        # nothing found on either side
        ([], [], {}, []),
        # keyword-only mode: bm25 order, best 1, weakest 0, scores spread between
        ([kw(1, -9.0), kw(2, -5.0), kw(3, -1.0)], [], {}, [(1, 1.0), (2, 0.5), (3, 0.0)]),
        # vector-only mode: cosine order on the same scale
        ([], [vec(4, 0.8), vec(5, 0.6), vec(6, 0.4)], {}, [(4, 1.0), (5, 0.5), (6, 0.0)]),
        # a lone hit on a side is that side's best
        ([kw(1, -0.2)], [], {}, [(1, 1.0)]),
        ([], [vec(1, -0.3)], {}, [(1, 1.0)]),
        # both sides: found by both beats found by one; keyword weighs 0.7 here
        ([kw(1, -9.0), kw(2, -1.0)], [vec(2, 0.9), vec(3, 0.1)], {}, [(1, 0.7), (2, 0.3), (3, 0.0)]),
        ([kw(1, -9.0), kw(2, -8.0), kw(3, -1.0)], [vec(2, 0.9), vec(1, 0.2)], {}, [(2, 0.9125), (1, 0.7), (3, 0.0)]),
        # weights the other way round let the vector side lead
        ([kw(1, -9.0), kw(2, -1.0)], [vec(2, 0.9), vec(3, 0.1)], {"vw": 0.7, "tw": 0.3}, [(2, 0.7), (1, 0.3), (3, 0.0)]),
        # both weights 0: the sides share equally rather than dividing by zero
        ([kw(1, -9.0), kw(2, -1.0)], [vec(2, 0.9)], {"vw": 0.0, "tw": 0.0}, [(1, 0.5), (2, 0.5)]),
        # min_score drops the tail, max_results cuts it
        ([kw(1, -9.0), kw(2, -5.0), kw(3, -1.0)], [], {"min_score": 0.4}, [(1, 1.0), (2, 0.5)]),
        ([kw(1, -9.0), kw(2, -5.0), kw(3, -1.0)], [], {"max_results": 1}, [(1, 1.0)]),
        ([kw(1, -9.0)], [], {"max_results": 0}, []),
        # ties keep the order the sides gave, keyword side first
        ([kw(7, -3.0), kw(5, -3.0), kw(6, -3.0)], [], {}, [(7, 1.0), (5, 1.0), (6, 1.0)]),
        ([kw(2, -3.0), kw(1, -1.0)], [vec(1, 0.5), vec(2, 0.1)], {"vw": 0.5, "tw": 0.5}, [(2, 0.5), (1, 0.5)]),
        # a side listing a chunk twice counts its best place once
        ([kw(1, -9.0), kw(1, -2.0), kw(2, -1.0)], [], {}, [(1, 1.0), (2, 0.0)]),
        # broken scores count as the weakest instead of poisoning the order
        ([kw(1, float("nan")), kw(2, -4.0), kw(3, -2.0)], [], {}, [(2, 1.0), (1, 0.0), (3, 0.0)]),
        ([], [vec(1, float("inf")), vec(2, 0.5), vec(3, 0.2)], {}, [(2, 1.0), (1, 0.0), (3, 0.0)]),
    ],
)
def test_fuse(keyword, vector, kwargs, expected):
    assert run(keyword, vector, **kwargs) == expected


def test_a_chunk_found_by_both_sides_carries_both_raw_scores():
    [hit] = fuse("q", [kw(1, -3.0)], [vec(1, 0.8)], max_results=6, min_score=0.0, vector_weight=0.3, text_weight=0.7)
    assert (hit.candidate.keyword_rank, hit.candidate.vector_similarity, hit.score) == (-3.0, 0.8, 1.0)


finite = st.floats(min_value=-50, max_value=50, allow_nan=False)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 30), finite), max_size=25),
    st.lists(st.tuples(st.integers(0, 30), st.floats(-1, 1)), max_size=25),
    st.integers(0, 12),
    st.floats(0, 1),
    st.floats(0, 1),
    st.floats(0, 1),
)
def test_fuse_always_returns_a_clean_ranking(k, v, max_results, min_score, vw, tw):
    keyword = sorted((kw(c, -abs(r)) for c, r in k), key=lambda c: c.keyword_rank)
    vector = sorted((vec(c, s) for c, s in v), key=lambda c: -c.vector_similarity)
    hits = fuse("q", keyword, vector, max_results=max_results, min_score=min_score, vector_weight=vw, text_weight=tw)
    scores = [h.score for h in hits]
    assert len(hits) <= max_results
    assert all(0.0 <= s <= 1.0 and s >= min_score and not math.isnan(s) for s in scores)
    assert scores == sorted(scores, reverse=True)
    assert len({h.candidate.chunk_id for h in hits}) == len(hits)
    assert {h.candidate.chunk_id for h in hits} <= {c.chunk_id for c in keyword + vector}
    if (keyword or vector) and max_results and min_score <= 0.0:
        assert hits


def lined(cid: int, rank: float, *lines: str) -> Candidate:
    return Candidate(
        chunk_id=cid,
        path=f"memory/{cid}.md",
        start_line=1,
        end_line=5,
        text=f"chunk {cid}",
        keyword_rank=rank,
        lines=tuple(frozenset(x.split()) for x in lines),
    )


@pytest.mark.parametrize(
    ("keyword", "expected"),
    [
        # same bm25: the chunk with the asked-about words on ONE line leads
        ([lined(1, -5.0, "mel", "pott", "clas"), lined(2, -5.0, "mel pott clas", "")], [2, 1]),
        # a word every candidate holds (the person's name) weighs little; the rare word wins
        ([lined(1, -5.0, "mel", "mel", "pott"), lined(2, -5.0, "mel"), lined(3, -5.0, "mel")], [1, 2, 3]),
        # the best line lifts a chunk only by its share: a far better bm25 still leads
        ([lined(1, -20.0, "a", "b"), lined(2, -1.0, "a b")], [1, 2]),
        # lines unknown (no candidate carries them): bm25 alone, as before
        ([kw(1, -2.0), kw(2, -3.0)], [2, 1]),
    ],
)
def test_best_line_evidence(keyword, expected):
    assert [cid for cid, _ in run(keyword, [])] == expected


def test_best_line_share_of_the_words_score():
    # bm25 best (1.0) with a weak line, bm25 weakest (0.0) with the best line: 0.7 and 0.3
    assert run([lined(1, -9.0, "a"), lined(2, -1.0, "a b")], []) == [(1, 0.7), (2, 0.3)]
