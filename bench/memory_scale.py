"""The memory index at scale: 100,000 chunks of daily notes through the real provider.

    uv run python bench/memory_scale.py [--chunks 100000] [--queries 200] [--sample 1000]

Writes deterministic daily notes (bench/memory_corpus.py) to a temp workspace and drives
``SqliteMemory`` through its public methods (``sync``, ``search``, ``status``) at the default
settings, once per backend:

- ``keyword``: ``embedder = "none"``, FTS5 only;
- ``vec0``: hybrid, vectors stored in sqlite-vec;
- ``numpy``: hybrid with ``disable = ["sqlite-vec"]`` (vectors compared in process).

The offline embedder (MiniLM int8) runs about 30 chunks/s here, an hour for 100k chunks, so
its throughput is measured on ``--sample`` chunks and the full index time extrapolated; the
100k hybrid indexes are built with a fast deterministic embedder (hashed words into 384
dims, the offline model's width) so searches and updates run against real 384-dim vectors.
Search times are the provider's whole ``search`` with the query vector given (the fast
embedder returns it in microseconds); the offline model's query embedding is reported
apart. An update is one edited file followed by the ``sync`` the watcher calls when its
debounce fires.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import shutil
import sys
import tempfile
import time
import zlib
from collections.abc import Sequence
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "plugins" / "memory"))
sys.path.insert(0, str(ROOT / "bench"))
from memory_corpus import Corpus, write_corpus  # noqa: E402

_WORD = re.compile(r"\w+")


class HashedWordsEmbedder:
    """Bag of words hashed (crc32) into 384 signed dims, L2-normalised: deterministic, fast,
    and as wide as the offline model, so the index stores and scans what it would with it."""

    provider = "hashed"
    model = "hashed-words-384"
    cache_key = "hashed/words-384"

    def __init__(self, dims: int = 384) -> None:
        self.dims = dims
        self._slot: dict[str, tuple[int, float]] = {}
        self.seconds = 0.0  # time spent embedding documents

    def describe(self) -> str:
        return f"hashed words ({self.dims} dims)"

    def _vector(self, text: str) -> np.ndarray:
        vec = np.zeros(self.dims, dtype=np.float32)
        slot = self._slot
        for word in _WORD.findall(text.lower()):
            found = slot.get(word)
            if found is None:
                h = zlib.crc32(word.encode())
                found = slot[word] = (h % self.dims, 1.0 if h & 0x80000000 else -1.0)
            vec[found[0]] += found[1]
        norm = float(np.linalg.norm(vec))
        return vec / norm if norm else vec

    async def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        started = time.perf_counter()
        out = np.stack([self._vector(t) for t in texts]) if texts else np.zeros((0, self.dims), np.float32)
        self.seconds += time.perf_counter() - started
        return out

    async def embed_query(self, text: str) -> np.ndarray:
        return self._vector(text)

    async def close(self) -> None:
        pass


def _ms(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return 1000 * ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _load() -> str:
    try:
        return f"load {os.getloadavg()[0]:.1f}"
    except OSError:
        return "load ?"


def _say(text: str) -> None:
    print(f"  [{time.strftime('%H:%M:%S')} {_load()}] {text}", file=sys.stderr, flush=True)


async def offline_figures(workspace: Path, sample: int) -> dict:
    """The offline embedder on ``sample`` chunks of the corpus: chunks/s and one query's time."""
    from clawbot_memory.chunking import chunk_markdown
    from clawbot_memory.embedders.local import LocalEmbedder

    texts: list[str] = []
    for path in sorted((workspace / "memory").rglob("*.md")):
        texts.extend(c.text for c in chunk_markdown(path.read_text(encoding="utf-8")))
        if len(texts) >= sample:
            break
    texts = texts[:sample]
    embedder = LocalEmbedder()
    await embedder.embed_query("warm up: load the model")
    started = time.perf_counter()
    await embedder.embed_documents(texts)
    rate = len(texts) / (time.perf_counter() - started)
    times = []
    for query in Corpus(7).queries(30):
        t = time.perf_counter()
        await embedder.embed_query(query)
        times.append(time.perf_counter() - t)
    await embedder.close()
    return {"rate": rate, "sample": len(texts), "query_p50": _ms(times, 0.5), "query_p95": _ms(times, 0.95), "load": embedder.load_seconds}


async def _searches(provider, queries: list[str]) -> tuple[list[float], object]:
    times, result = [], None
    for query in queries:
        t = time.perf_counter()
        result = await provider.search(query, agent_id="main")
        times.append(time.perf_counter() - t)
    return times, result


async def _updates(provider, files: list[Path], edits: int, tag: str, *, watched_paths: bool) -> list[float]:
    """Edit one file, then time the sync the watcher runs when its debounce fires (with the
    changed path, as the watcher hands it over) or a sync that checks every file."""
    took = []
    for n in range(edits):
        path = files[(n * 7919 + (0 if watched_paths else 13)) % len(files)]
        text = path.read_text(encoding="utf-8")
        path.write_text(text + f"\n## Later\n- Added note {n} about the zebrafish tankard ({tag}).\n", encoding="utf-8")
        t = time.perf_counter()
        report = await provider.sync(agent_id="main", paths=[path] if watched_paths else None)
        took.append(time.perf_counter() - t)
        assert report.files_indexed == 1, report
        path.write_text(text, encoding="utf-8")
        await provider.sync(agent_id="main", paths=[path])
    return took


async def run_backend(name: str, workspace: Path, state: Path, queries: list[str], edits: int) -> dict:
    from clawbot_memory.config import MemorySettings
    from clawbot_memory.provider import SqliteMemory

    embedder = None if name == "keyword" else HashedWordsEmbedder()
    settings = MemorySettings(embedder="none" if embedder is None else "local", disable=["sqlite-vec"] if name == "numpy" else [])
    provider = SqliteMemory(settings=settings, state_dir=state, workspace_of=lambda _agent: workspace, env={}, embedder_factory=lambda _s, _e: embedder)
    out: dict = {"backend": name}
    try:
        _say(f"{name}: indexing")
        started = time.perf_counter()
        report = await provider.sync(agent_id="main")
        out["index_s"] = time.perf_counter() - started
        out["chunks"] = report.chunks
        out["embed_s"] = embedder.seconds if embedder else 0.0
        status = await provider.status(agent_id="main")
        out["db_bytes"] = status.index_bytes
        _say(f"{name}: {report.chunks} chunks in {out['index_s']:.1f} s, {status.index_bytes / 1e6:.0f} MB; searching")

        # without the watcher, each search first stats every file (is the index stale?)
        times, _ = await _searches(provider, queries[:20])
        out["search_stat_p50"] = _ms(times, 0.5)
        files = sorted((workspace / "memory").rglob("*.md"))
        took = await _updates(provider, files, edits, name, watched_paths=True)
        out["update_p50"], out["update_max"] = _ms(took, 0.5), max(took) * 1000
        took = await _updates(provider, files, max(2, edits // 3), name, watched_paths=False)
        out["update_full_p50"] = _ms(took, 0.5)
        _say(f"{name}: update p50 {out['update_p50']:.1f} ms; watching")

        # as `clawbot run` has it: the watcher runs, searches rely on it
        await provider.start(agent_ids=["main"])
        while not (await provider.status(agent_id="main")).watching:
            await asyncio.sleep(0.05)
        times, result = await _searches(provider, queries)
        out["search_p50"], out["search_p95"] = _ms(times, 0.5), _ms(times, 0.95)
        out["mode"] = result.mode
        out["matrix_bytes"] = _matrix_bytes(provider)
        if embedder is not None:
            out["matrix_p50"], out["vec0_knn_p50"] = _vector_scans(provider, embedder, queries[:50], vec0=name == "vec0")
        # an edit, end to end: written -> found by a search (debounce included)
        path = files[len(files) // 2]
        text = path.read_text(encoding="utf-8")
        path.write_text(text + "\n## Later\n- Quokkafeather reminder.\n", encoding="utf-8")
        t = time.perf_counter()
        while not any("Quokkafeather" in h.snippet for h in (await provider.search("quokkafeather", agent_id="main", min_score=0.0)).hits):
            if time.perf_counter() - t > 60:
                raise SystemExit(f"{name}: an edited file was not searchable a minute later")
            await asyncio.sleep(0.02)
        out["edit_to_found_s"] = time.perf_counter() - t
        path.write_text(text, encoding="utf-8")
        _say(f"{name}: search p50 {out['search_p50']:.1f} ms")
    finally:
        await provider.close()
    return out


def _vector_scans(provider, embedder, queries: list[str], *, vec0: bool) -> tuple[float, float | None]:
    """The vector side alone, p50 ms: the in-memory scan the search uses, and sqlite-vec's own
    exact KNN over the same vectors for comparison (k = 24, the default candidates)."""
    store = provider._agents["main"].store  # the bench reaches into the index to time each side alone
    scan, knn = [], []
    with store.read() as conn:
        snap = store.vector_cache.snapshot(conn, embedder.cache_key)
        for query in queries:
            q = embedder._vector(query)
            t = time.perf_counter()
            snap.top(q, 24)
            scan.append(time.perf_counter() - t)
            if vec0:
                t = time.perf_counter()
                conn.execute("select rowid, distance from chunks_vec where embedding match ? and k = 24", (q.tobytes(),)).fetchall()
                knn.append(time.perf_counter() - t)
    return _ms(scan, 0.5), _ms(knn, 0.5) if knn else None


def _matrix_bytes(provider) -> int:
    cache = provider._agents["main"].store.vector_cache  # the bench reads the in-memory vectors' size
    return cache.bytes() if cache is not None else 0


def table(results: list[dict], offline: dict | None, corpus: tuple[int, int, int]) -> str:
    files, chunks, size = corpus
    lines = [
        f"memory index at scale: {chunks:,} chunks in {files:,} files ({size / 1e6:.0f} MB of Markdown), "
        f"{time.strftime('%Y-%m-%d')}, Python {sys.version.split()[0]}, {os.cpu_count()} CPUs, {_load()}",
        "backend  mode     index s chunks/s | search ms p50   p95  stat-first p50 | update ms p50   max  full-scan | edit->found s | db MB  RAM vectors MB",
    ]
    for r in results:
        rate = r["chunks"] / max(1e-9, r["index_s"] - r["embed_s"])
        lines.append(
            f"{r['backend']:<8} {r['mode']:<8} {r['index_s']:7.1f} {rate:8.0f} | {r['search_p50']:13.1f} {r['search_p95']:5.1f} {r['search_stat_p50']:15.1f}"
            f" | {r['update_p50']:13.1f} {r['update_max']:5.1f} {r['update_full_p50']:10.1f} | {r['edit_to_found_s']:13.2f}"
            f" | {r['db_bytes'] / 1e6:5.0f} {r['matrix_bytes'] / 1e6:15.0f}"
        )
    lines.append("chunks/s leaves out the fast test embedder's own time (hashed words, 384 dims)")
    for r in results:
        if r.get("matrix_p50") is not None:
            knn = r.get("vec0_knn_p50")
            lines.append(
                f"{r['backend']}: vector side alone, p50: in-memory scan {r['matrix_p50']:.1f} ms"
                + (f"; sqlite-vec's exact KNN over the same vectors {knn:.1f} ms (not on the search path)" if knn is not None else "")
            )
    if offline:
        hybrid = next((r for r in results if r["backend"] == "vec0"), results[-1])
        total = hybrid["index_s"] - hybrid["embed_s"] + chunks / offline["rate"]
        lines.append(
            f"offline embedder (MiniLM int8): {offline['rate']:.1f} chunks/s on {offline['sample']} chunks; "
            f"{chunks:,} chunks extrapolated: {total / 60:.0f} min ({chunks / total:.1f} chunks/s); "
            f"one query embedded: p50 {offline['query_p50']:.1f} ms, p95 {offline['query_p95']:.1f} ms"
        )
    return "\n".join(lines)


async def main_async(args: argparse.Namespace) -> None:
    base = Path(args.dir) if args.dir else Path(tempfile.mkdtemp(prefix="clawbot-memory-scale-"))
    workspace = base / "workspace"
    try:
        _say(f"writing {args.chunks:,} chunks of daily notes under {workspace}")
        corpus = write_corpus(workspace, args.chunks, seed=args.seed)
        queries = Corpus(args.seed + 1).queries(args.queries)
        offline = None if args.sample <= 0 else await offline_figures(workspace, args.sample)
        if offline:
            _say(f"offline embedder: {offline['rate']:.1f} chunks/s")
        results = []
        for name in args.backends.split(","):
            results.append(await run_backend(name, workspace, base / f"state-{name}", queries, args.edits))
        print(table(results, offline, corpus))
    finally:
        if not args.keep:
            shutil.rmtree(base, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--edits", type=int, default=10, help="single-file updates measured")
    parser.add_argument("--sample", type=int, default=1000, help="chunks the offline embedder embeds (0: skip it)")
    parser.add_argument("--backends", default="keyword,vec0,numpy")
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--dir", help="work here instead of a temp dir")
    parser.add_argument("--keep", action="store_true", help="keep the files and indexes")
    asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    main()
