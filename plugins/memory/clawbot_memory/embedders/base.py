"""What the index needs from an embedder, and the one place that builds one from the settings.

Light on purpose: the plugin imports this at start-up, so numpy, onnxruntime and the openai
SDK load only inside the embedders' methods, the first time memory is searched or indexed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Protocol, runtime_checkable

import attrs

if TYPE_CHECKING:
    import numpy

#: The embedder kinds ``[plugins.memory] embedder`` accepts.
KINDS = ("local", "openai", "ollama", "openai-compatible", "none")

#: The model each kind uses when ``model`` is left empty.
DEFAULT_MODELS = {
    "local": "all-MiniLM-L6-v2",
    "openai": "text-embedding-3-small",
    "ollama": "nomic-embed-text",
    "openai-compatible": "",
}

#: The endpoint each kind calls when ``base_url`` is left empty ("" = the SDK's own, OpenAI's).
DEFAULT_BASE_URLS = {
    "openai": "",
    "ollama": "http://127.0.0.1:11434/v1",
    "openai-compatible": "",
}


@attrs.frozen
class EmbedderSettings:
    kind: str = "local"
    model: str = ""
    """"" = the kind's default (:data:`DEFAULT_MODELS`)."""
    base_url: str = ""
    """The ollama / openai-compatible endpoint ("" = the kind's default)."""
    api_key: str = attrs.field(default="", repr=False)
    """Never logged, never in errors; "" = OPENAI_API_KEY from the environment for ``openai``."""
    batch_tokens: int = 8000
    retries: int = 3


class EmbedderError(Exception):
    """An embedder that cannot embed now; ``str(exc)`` is a sentence for ``memory status`` and
    the model, naming the embedder and what to do, never a secret."""


@runtime_checkable
class Embedder(Protocol):
    provider: str
    """"local", "openai", "ollama", "openai-compatible"."""
    model: str
    cache_key: str
    """Provider + model + endpoint identity: embeddings cached under one key are comparable
    with each other (never a secret)."""

    def describe(self) -> str:
        """A short description for status lines: ``local all-MiniLM-L6-v2 (384 dims)``."""
        ...

    async def embed_documents(self, texts: Sequence[str]) -> numpy.ndarray:
        """float32 ``(len(texts), dims)``, each row L2-normalised, in the order of ``texts``."""
        ...

    async def embed_query(self, text: str) -> numpy.ndarray:
        """float32 ``(dims,)``, L2-normalised."""
        ...

    async def close(self) -> None: ...


def build_embedder(settings: EmbedderSettings, env: Mapping[str, str]) -> Embedder | None:
    """The embedder ``settings`` ask for; None for ``none`` (keyword search only).

    Never fails for a missing key or an endpoint that is down: those are reported by the
    embedder when it is used (:class:`EmbedderError`), so memory still answers by keyword.
    Raises :class:`EmbedderError` only for a kind that does not exist.
    """
    kind = settings.kind
    if kind == "none":
        return None
    if kind == "local":
        from clawbot_memory.embedders.local import LocalEmbedder

        return LocalEmbedder(model=settings.model or DEFAULT_MODELS["local"])
    if kind in ("openai", "ollama", "openai-compatible"):
        from clawbot_memory.embedders.openai import OpenAIEmbedder

        return OpenAIEmbedder.from_settings(settings, env)
    raise EmbedderError(f"[plugins.memory] embedder = {kind!r} is not an embedder clawbot knows: use one of {', '.join(KINDS)}.")


def normalized_rows(vectors: numpy.ndarray) -> numpy.ndarray:
    """``vectors`` (n, dims) as float32 with each row scaled to length 1 (a zero row stays 0)."""
    import numpy as np

    array = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(array, axis=1, keepdims=True)
    return (array / np.clip(norms, 1e-12, None)).astype(np.float32, copy=False)
