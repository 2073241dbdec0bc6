"""Embedders: text -> vectors for memory search by meaning (offline, OpenAI-compatible, or none).

Only :mod:`.base` is light; the embedders themselves import their libraries when used.
"""

from clawbot_memory.embedders.base import KINDS, Embedder, EmbedderError, EmbedderSettings, build_embedder

__all__ = ["KINDS", "Embedder", "EmbedderError", "EmbedderSettings", "build_embedder"]
