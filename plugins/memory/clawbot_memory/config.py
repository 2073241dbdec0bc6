"""The ``[plugins.memory]`` table: how the agents' Markdown memory is indexed and searched."""

from __future__ import annotations

from typing import Literal

import attrs
from clawbot.types import InRange, OutOfRange

#: Parts of the index engine that ``disable`` can turn off, to see (or test) how memory
#: behaves on a machine where they are missing: "sqlean" = use the standard library's
#: sqlite3, "sqlite-vec" = vectors kept only in the chunks table, "fts5" = no keyword search.
DISABLEABLE = ("sqlean", "sqlite-vec", "fts5")


def _parts(instance: object, attribute: attrs.Attribute, value: list[str]) -> None:
    for index, part in enumerate(value):
        if part not in DISABLEABLE:
            known = ", ".join(f'"{d}"' for d in DISABLEABLE)
            raise OutOfRange((attribute.name, index), f"{part!r} is not a part that can be turned off ({known})")


@attrs.frozen(kw_only=True)
class MemorySettings:
    # Who turns text into vectors: "local" (offline, no key), "openai", "ollama",
    # "openai-compatible" (base_url), or "none" (keyword search only).
    embedder: Literal["local", "openai", "ollama", "openai-compatible", "none"] = "local"
    # The embedding model; empty: the embedder's default.
    model: str = ""
    # The endpoint of "ollama" / "openai-compatible"; empty: the embedder's default.
    base_url: str = ""
    # The embedding API key; empty: OPENAI_API_KEY from the environment for "openai".
    api_key: str = attrs.field(default="", repr=False)
    # Chunks of about this many tokens (estimated offline), overlapping by chunk_overlap
    # (at most half a chunk counts: a larger overlap would barely move on through a file).
    chunk_tokens: int = attrs.field(default=400, validator=InRange(16, 8192))
    chunk_overlap: int = attrs.field(default=80, validator=InRange(0, 4096))

    @property
    def overlap_tokens(self) -> int:
        """The overlap in use: ``chunk_overlap``, at most half of ``chunk_tokens``."""
        return min(self.chunk_overlap, self.chunk_tokens // 2)

    # Hits a search returns when the caller asks for no number.
    max_results: int = attrs.field(default=6, validator=InRange(1, 100))
    # Hits scoring below this (0..1) are left out. Scores are relative to the best candidate
    # of each side in this search, so this cuts a weak tail rather than judging relevance.
    min_score: float = attrs.field(default=0.2, validator=InRange(0, 1))
    # Each side (keyword, vector) fetches max_results x this many candidates before merging.
    candidate_multiplier: int = attrs.field(default=4, validator=InRange(1, 50))
    # How much the meaning (vector) and the words (keyword) count in the merged score; words
    # lead because the offline embedder is weak on long chunks (docs/benchmarks.md, LoCoMo).
    vector_weight: float = attrs.field(default=0.3, validator=InRange(0, 1))
    text_weight: float = attrs.field(default=0.7, validator=InRange(0, 1))
    # Characters of chunk text a hit shows.
    snippet_chars: int = attrs.field(default=700, validator=InRange(40, 20_000))
    # More Markdown to index: files or folders (searched for *.md), relative to the workspace
    # or absolute. Nothing outside the workspace and these is ever indexed.
    extra_paths: list[str] = attrs.field(factory=list)
    # Watch the memory files while clawbot runs and re-index what changes.
    watch: bool = True
    # Quiet time after the last change before the index follows.
    watch_debounce_ms: int = attrs.field(default=1500, validator=InRange(0, 600_000))
    # Turn off parts of the index engine: "sqlean" (use the standard sqlite3), "sqlite-vec"
    # (vectors kept only in the chunks table; searches scan them in memory either way), "fts5" (no keyword search). For diagnosis and tests;
    # `clawbot memory status` then names the setting as the reason.
    disable: list[str] = attrs.field(factory=list, validator=_parts)

    def __attrs_post_init__(self) -> None:
        # keys that are only wrong together, reported at the second one
        if self.vector_weight + self.text_weight <= 0:
            raise OutOfRange("text_weight", "vector_weight and text_weight cannot both be 0")
