"""Offline embedders on LoCoMo: recall of evidence turns by vectors alone, and with BM25.

    uv run python bench/embedders_locomo.py [--data ../shared/data/locomo/locomo-dev.json]
    uv run --with wordllama python bench/embedders_locomo.py --only wordllama

Each session of each conversation becomes a Markdown text (a dated heading, one line a
turn), cut into chunks of whole lines of at most 400 estimated tokens with 80 of overlap,
the heading repeated in each. Every question with evidence is embedded and the chunks ranked
by cosine; recall@k is the share of a question's evidence turns inside its top k chunks,
averaged over questions. "+bm25" ranks by 0.5 x min-max cosine + 0.5 x BM25 / its max (a
plain fusion, only to see what each embedder adds to keywords; the memory plugin's own
ranking is measured by bench/memory_locomo.py). The data is read in place, never copied.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "plugins" / "memory"))
from clawbot.tokens import estimate_tokens  # noqa: E402

CHUNK, OVERLAP, KS = 400, 80, (1, 3, 6, 10)
_WORD = re.compile(r"[a-z0-9]+")
_STOP = set(
    "a an the of to in on at for and or is are was were be been do does did what when where who whom which why how would could should "
    "has have had her his their its it he she they them i you we my your our with from by as that this these those about into than then "
    "so not no yes can will".split()
)


def chunks_of(conversation: dict) -> list[tuple[str, set[str]]]:
    out = []
    n = 1
    while f"session_{n}" in conversation:
        head = f"# Session {n}, {conversation.get(f'session_{n}_date_time', '')}"
        lines, ids = [], []
        for turn in conversation[f"session_{n}"]:
            caption = f" [shares a photo: {turn['blip_caption']}]" if turn.get("blip_caption") else ""
            lines.append(f"- {turn['speaker']}: {turn['text']}{caption}")
            ids.append(turn["dia_id"])
        start = 0
        while start < len(lines):
            size, end = estimate_tokens(head), start
            while end < len(lines) and (end == start or size + estimate_tokens(lines[end]) <= CHUNK):
                size += estimate_tokens(lines[end])
                end += 1
            out.append(("\n".join([head, *lines[start:end]]), set(ids[start:end])))
            if end >= len(lines):
                break
            back, k = 0, end
            while k - 1 > start and back + estimate_tokens(lines[k - 1]) <= OVERLAP:
                back += estimate_tokens(lines[k - 1])
                k -= 1
            start = k
        n += 1
    return out


def bm25(texts: list[str], query: str) -> np.ndarray:
    docs = [Counter(w for w in _WORD.findall(t.lower()) if w not in _STOP) for t in texts]
    lengths = np.array([sum(d.values()) for d in docs], float)
    df = Counter(w for d in docs for w in d)
    scores = np.zeros(len(docs))
    for word in {w for w in _WORD.findall(query.lower()) if w not in _STOP and w in df}:
        idf = math.log(1 + (len(docs) - df[word] + 0.5) / (df[word] + 0.5))
        tf = np.array([d.get(word, 0) for d in docs], float)
        scores += idf * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * lengths / lengths.mean()))
    return scores


def local(window: bool):
    from clawbot_memory.embedders.local import LocalEmbedder, _run

    embedder = LocalEmbedder()
    if window:
        return embedder.embed_sync, embedder

    def truncated(texts: list[str]) -> np.ndarray:  # the sentence-transformers default: one input cut at 256
        session, tokenizer = embedder._load()
        return _run(session, [e.ids[:254] for e in tokenizer.encode_batch(texts, add_special_tokens=False)])

    return truncated, embedder


def wordllama():
    import os

    import wordllama as wl

    model = wl.WordLlama.load(cache_dir=os.path.dirname(wl.__file__), disable_download=True)
    return (lambda texts: np.asarray(model.embed(texts, norm=True), np.float32)), None


CANDIDATES = {
    "local": lambda: local(True),
    "minilm-256-cut": lambda: local(False),
    "wordllama": wordllama,
}


def measure(name: str, samples: list[dict]) -> None:
    started = time.perf_counter()
    embed, embedder = CANDIDATES[name]()
    embed(["warm up"])
    load = time.perf_counter() - started
    dense = {k: [] for k in KS}
    fused = {k: [] for k in KS}
    texts_done, chunk_s, chunks_done = 0, 0.0, 0
    for sample in samples:
        chunks = chunks_of(sample["conversation"])
        questions = [(q["question"], set(q["evidence"])) for q in sample["qa"] if q.get("evidence")]
        t = time.perf_counter()
        documents = embed([c[0] for c in chunks])
        chunk_s += time.perf_counter() - t
        chunks_done += len(chunks)
        queries = embed([q for q, _ in questions])
        texts_done += len(chunks) + len(questions)
        for (question, evidence), similarity in zip(questions, queries @ documents.T, strict=True):
            keyword = bm25([c[0] for c in chunks], question)
            vector = (similarity - similarity.min()) / (similarity.max() - similarity.min() + 1e-9)
            both = 0.5 * vector + 0.5 * (keyword / keyword.max() if keyword.max() > 0 else keyword)
            for scores, table in ((similarity, dense), (both, fused)):
                top = np.argsort(-scores)
                for k in KS:
                    found = set().union(*(chunks[i][1] for i in top[:k]))
                    table[k].append(len(evidence & found) / len(evidence))
    row = lambda table: " ".join(f"{100 * np.mean(table[k]):5.1f}" for k in KS)  # noqa: E731
    print(f"{name:15} dense R@1/3/6/10 {row(dense)} | +bm25 {row(fused)} | {chunks_done / chunk_s:7.1f} chunks/s, load {load:.2f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=str(ROOT.parent / "shared" / "data" / "locomo" / "locomo-dev.json"))
    parser.add_argument("--only", action="append", choices=sorted(CANDIDATES), help="candidates to run (default: local, minilm-256-cut)")
    args = parser.parse_args()
    samples = json.loads(Path(args.data).read_text(encoding="utf-8"))
    questions = sum(1 for s in samples for q in s["qa"] if q.get("evidence"))
    print(f"{len(samples)} conversations, {questions} questions with evidence; chunks <= {CHUNK} tokens, overlap {OVERLAP}")
    for name in args.only or ["local", "minilm-256-cut"]:
        measure(name, samples)


if __name__ == "__main__":
    main()
