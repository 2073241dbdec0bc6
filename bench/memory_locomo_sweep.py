"""The variants measured on LoCoMo before choosing the plugin's defaults (``--sweep``).

Each is a :class:`memory_locomo.Setup`: the reference design (question words quoted and
ANDed, bm25 rank -> 1/(1+max(0,rank)), 0.7 vector + 0.3 text), then one change at a time.
"""

from __future__ import annotations

import math
import re
from dataclasses import replace

from clawbot_memory.query import STOPWORDS, keyword_query
from clawbot_memory.ranking import Scored
from locomo_corpus import Layout
from memory_locomo import Setup


def query_and(text: str) -> str | None:
    words = re.findall(r"[^\W_]+", text.lower())
    return " AND ".join(f'"{w}"' for w in dict.fromkeys(words)) or None


def query_or_all(text: str) -> str | None:
    words = re.findall(r"[^\W_]+", text.lower())
    return " OR ".join(f'"{w}"' for w in dict.fromkeys(words)) or None


def query_or_prefix(text: str) -> str | None:
    words = [w for w in re.findall(r"[^\W_]+", text.lower()) if w not in STOPWORDS]
    return " OR ".join(f'"{w}"*' if len(w) >= 4 else f'"{w}"' for w in dict.fromkeys(words)) or None


def _overlaps(a, b, share: float) -> bool:
    if a.path != b.path:
        return False
    common = min(a.end_line, b.end_line) - max(a.start_line, b.start_line) + 1
    return common > share * min(a.end_line - a.start_line + 1, b.end_line - b.start_line + 1)


def _finish(scores, by_id, max_results, min_score, dedupe=0.0):
    ranked = sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))
    out = []
    for i, s in ranked:
        if s < min_score or len(out) >= max_results:
            break
        if dedupe and any(_overlaps(by_id[i], o.candidate, dedupe) for o in out):
            continue
        out.append(Scored(by_id[i], max(0.0, min(1.0, s))))
    return out


def make_fuse(norm: str, rrf_k: float = 60.0, dedupe: float = 0.0):
    def fuse(query, keyword, vector, *, max_results, min_score, vector_weight, text_weight):
        by_id = {c.chunk_id: c for c in list(vector) + list(keyword)}
        sides = []
        if keyword:
            sides.append((text_weight, [c.chunk_id for c in keyword], [-c.keyword_rank for c in keyword]))
        if vector:
            sides.append((vector_weight, [c.chunk_id for c in vector], [c.vector_similarity for c in vector]))
        if norm == "reference":  # 1/(1+max(0,rank)): every bm25 hit scores 1 (bm25 is negative)
            scores = {}
            for c in keyword:
                scores[c.chunk_id] = scores.get(c.chunk_id, 0) + text_weight / (1 + max(0.0, c.keyword_rank))
            for c in vector:
                scores[c.chunk_id] = scores.get(c.chunk_id, 0) + vector_weight * c.vector_similarity
            return _finish(scores, by_id, max_results, min_score, dedupe)
        total = sum(w for w, _, _ in sides) or 1.0
        scores = dict.fromkeys(by_id, 0.0)
        for w, ids, raw in sides:
            if norm == "rrf":
                vals = [1.0 / (rrf_k + r) * (rrf_k + 1) for r in range(1, len(ids) + 1)]
            elif norm == "minmax":
                lo, hi = min(raw), max(raw)
                vals = [(x - lo) / (hi - lo) if hi > lo else 1.0 for x in raw]
            elif norm == "z":
                mu = sum(raw) / len(raw)
                sd = math.sqrt(sum((x - mu) ** 2 for x in raw) / len(raw)) or 1.0
                vals = [1 / (1 + math.exp(-(x - mu) / sd)) for x in raw]
            elif norm == "maxnorm":  # share of the best score on that side
                hi = max(raw)
                vals = [x / hi if hi > 0 else 0.0 for x in raw]
            for i, v in zip(ids, vals, strict=True):
                scores[i] += w / total * v
        return _finish(scores, by_id, max_results, min_score, dedupe)

    return fuse


REF = Setup(
    heading_breaks=False,
    heading_context=False,
    tokenizer="unicode61",
    query=query_and,
    fuse=make_fuse("reference"),
    layout=Layout(captions=False, session_heading="## Session at {time}"),
)
BASE = replace(
    REF, query=keyword_query, tokenizer="porter unicode61 remove_diacritics 2", fuse=make_fuse("minmax"), layout=Layout(session_heading="## Session at {time}")
)

VARIANTS: dict[str, Setup] = {
    "reference (AND, 1/(1+rank), 0.7/0.3)": REF,
    "+ captions": (s1 := replace(REF, layout=Layout(session_heading="## Session at {time}"))),
    "+ OR all words": replace(s1, query=query_or_all),
    "+ OR stopword-filtered": (s2 := replace(s1, query=keyword_query)),
    "+ porter": (s3 := replace(s2, tokenizer="porter unicode61 remove_diacritics 2")),
    "+ prefix*": replace(s3, query=query_or_prefix),
    "+ rrf k=60": replace(s3, fuse=make_fuse("rrf")),
    "+ minmax": (s4 := replace(s3, fuse=make_fuse("minmax"))),
    "+ z": replace(s3, fuse=make_fuse("z")),
    "+ maxnorm": replace(s3, fuse=make_fuse("maxnorm")),
    "minmax 0.5/0.5": replace(s4, vector_weight=0.5, text_weight=0.5),
    "minmax 0.3/0.7": replace(s4, vector_weight=0.3, text_weight=0.7),
    "minmax + heading breaks": (s5 := replace(s4, heading_breaks=True)),
    "minmax + heading breaks + context": (s6 := replace(s5, heading_context=True)),
    "s6 speakers in heading": replace(s6, layout=Layout()),
    "s6 chunks 300/60": replace(s6, chunk_tokens=300, overlap=60),
    "s6 chunks 200/40": replace(s6, chunk_tokens=200, overlap=40),
    "s6 chunks 400/0": replace(s6, overlap=0),
    "s6 multiplier 8": replace(s6, candidate_multiplier=8),
    # then: keyword-heavy fusion, de-duplication, overlap, no captions
    "B no captions": replace(BASE, layout=Layout(captions=False, session_heading="## Session at {time}")),
    "B minmax 0.2/0.8": replace(BASE, vector_weight=0.2, text_weight=0.8),
    "B minmax 0.3/0.7 m8": replace(BASE, vector_weight=0.3, text_weight=0.7, candidate_multiplier=8),
    "B maxnorm 0.3/0.7": replace(BASE, fuse=make_fuse("maxnorm"), vector_weight=0.3, text_weight=0.7),
    "B maxnorm 0.5/0.5": replace(BASE, fuse=make_fuse("maxnorm"), vector_weight=0.5, text_weight=0.5),
    "B rrf 0.3/0.7": replace(BASE, fuse=make_fuse("rrf"), vector_weight=0.3, text_weight=0.7),
    "B rrf k=10 0.3/0.7": replace(BASE, fuse=make_fuse("rrf", rrf_k=10), vector_weight=0.3, text_weight=0.7),
    "B minmax 0.3/0.7 dedupe": (b1 := replace(BASE, fuse=make_fuse("minmax", dedupe=0.5), vector_weight=0.3, text_weight=0.7)),
    "B1 overlap 160": replace(b1, overlap=160),
    "B1 overlap 200": replace(b1, overlap=200),
    "B1 overlap 120": replace(b1, overlap=120),
    "B1 dedupe 0.0 any": replace(b1, fuse=make_fuse("minmax", dedupe=0.01)),
}

FRAME = STOPWORDS | frozenset("kind type sort thing things something anything likely think would considered mention mentioned".split())


def query_frame(text: str) -> str | None:
    words = re.findall(r"[^\W_]+", text.lower())
    kept = [w for w in words if w not in FRAME] or words
    return " OR ".join(f'"{w}"' for w in dict.fromkeys(kept)) or None


DATED = Layout(session_heading="## {time}, conversation between {a} and {b}", date_words=True)
b2 = replace(b1, fuse=make_fuse("minmax"), overlap=80)
VARIANTS |= {
    # then: the day's date in words in the file's heading, headings carried into each chunk
    "C dated heading": (c1 := replace(b2, layout=DATED)),
    "C dated heading + context": (c2 := replace(c1, heading_context=True)),
    "C dated + context + breaks": (c3 := replace(c2, heading_breaks=True)),
    "C3 frame words": replace(c3, query=query_frame),
    "C3 0.2/0.8": replace(c3, vector_weight=0.2, text_weight=0.8),
    "C3 0.4/0.6": replace(c3, vector_weight=0.4, text_weight=0.6),
    "C3 overlap 200": replace(c3, overlap=200),
    "C3 overlap 120": replace(c3, overlap=120),
}

d1 = replace(c3, query=query_frame, embed_context=False)
VARIANTS |= {
    # then: vectors of the plain chunk (the heading trail goes to the keyword index only)
    "D frame + plain vectors": d1,
    "D1 multiplier 8": replace(d1, candidate_multiplier=8),
    "D1 0.2/0.8": replace(d1, vector_weight=0.2, text_weight=0.8),
    "D1 0.4/0.6": replace(d1, vector_weight=0.4, text_weight=0.6),
    "D1 overlap 120": replace(d1, overlap=120),
    "D1 rrf k=10 0.3/0.7": replace(d1, fuse=make_fuse("rrf", rrf_k=10)),
    "D1 z 0.3/0.7": replace(d1, fuse=make_fuse("z")),
}
