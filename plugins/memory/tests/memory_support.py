"""A small deterministic embedder and a provider over real files, for the memory tests.

The embedder is a bag of hashed words: texts sharing words get similar vectors, nothing is
downloaded, and every call is counted. It is handed to the provider through its
``embedder_factory`` argument, as any embedder is.
"""

from __future__ import annotations

import asyncio
import hashlib
import re
from collections.abc import Sequence
from pathlib import Path

import numpy
from clawbot_memory.config import MemorySettings
from clawbot_memory.provider import SqliteMemory


class WordsEmbedder:
    provider = "words"

    def __init__(self, dims: int = 64, model: str = "bag-of-words") -> None:
        self.dims = dims
        self.model = model
        self.cache_key = f"words:{model}:{dims}"
        self.documents: list[str] = []  # every text embedded for the index
        self.queries: list[str] = []
        self.fail: str | None = None  # set: every call raises this
        self.gate: asyncio.Event | None = None  # set: embed_documents waits for it
        self.entered = asyncio.Event()
        self.closed = False

    def describe(self) -> str:
        return f"words {self.model} ({self.dims} dims)"

    def vector(self, text: str) -> numpy.ndarray:
        vec = numpy.zeros(self.dims, dtype=numpy.float32)
        for word in re.findall(r"\w+", text.lower()):
            vec[int(hashlib.md5(word.encode()).hexdigest(), 16) % self.dims] += 1.0
        norm = float(numpy.linalg.norm(vec))
        return vec / norm if norm else vec

    async def embed_documents(self, texts: Sequence[str]) -> numpy.ndarray:
        self.entered.set()
        if self.gate is not None:
            await self.gate.wait()
        if self.fail:
            raise RuntimeError(self.fail)
        self.documents.extend(texts)
        return numpy.stack([self.vector(t) for t in texts]) if texts else numpy.zeros((0, self.dims), numpy.float32)

    async def embed_query(self, text: str) -> numpy.ndarray:
        if self.fail:
            raise RuntimeError(self.fail)
        self.queries.append(text)
        return self.vector(text)

    async def close(self) -> None:
        self.closed = True


def make_provider(state: Path, workspaces: dict[str, Path] | Path, embedder: WordsEmbedder | None = None, **settings) -> SqliteMemory:
    """A provider over real directories; ``workspaces`` maps agent ids to folders (one folder:
    every agent's)."""
    settings.setdefault("min_score", 0.0)

    def workspace_of(agent_id: str) -> Path:
        return workspaces[agent_id] if isinstance(workspaces, dict) else workspaces

    return SqliteMemory(
        settings=MemorySettings(**settings),
        state_dir=state,
        workspace_of=workspace_of,
        env={},
        embedder_factory=lambda _settings, _env: embedder,
    )


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path
