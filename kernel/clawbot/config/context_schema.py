"""``agents.defaults.compaction``, ``agents.list[].compaction`` and ``agents.defaults.context_pruning``:
how a history that outgrows the context window is kept in it."""

from __future__ import annotations

from typing import Literal

import attrs

from clawbot.types.context import InRange, OutOfRange

DEFAULT_COMPACTION_STRATEGY = "summary"


@attrs.frozen(kw_only=True)
class MemoryFlushConfig:
    """A silent turn that stores durable notes before a compaction summarises them away."""

    enabled: bool = True
    # fires once per compaction cycle when the session reaches window - reserve - this
    soft_threshold_tokens: int = attrs.field(default=4_000, validator=InRange(0, 10_000_000))
    system_prompt: str = "The session is close to compaction. Store durable memories now."
    prompt: str = (
        "Write lasting notes (decisions, facts, preferences, open questions) to memory/YYYY-MM-DD.md "
        "with today's date; if there is nothing to store, reply with NO_REPLY."
    )

    def __attrs_post_init__(self) -> None:
        if self.enabled and not self.prompt.strip():
            raise OutOfRange("prompt", "must not be empty while enabled = true (set enabled = false to turn the flush off)")


@attrs.frozen(kw_only=True)
class CompactionConfig:
    # Which installed compaction strategy shrinks a history that outgrew the context window.
    # The default names the one clawbot ships; when no plugin offers it the only one installed
    # is used. Empty: the only one installed (several installed and none named is an error).
    strategy: str = DEFAULT_COMPACTION_STRATEGY
    # compaction starts when the next request would leave less than this free in the window
    reserve_tokens_floor: int = attrs.field(default=20_000, validator=InRange(0, 10_000_000))
    # the newest part of the history a compaction keeps word for word
    keep_recent_tokens: int = attrs.field(default=20_000, validator=InRange(0, 10_000_000))
    memory_flush: MemoryFlushConfig = attrs.field(factory=MemoryFlushConfig)
    # the longest one plugin's clawbot_compaction_near may take before the turn goes on without
    # it (the memory flush: a few model calls, each with its provider's own retries)
    near_timeout_seconds: int = attrs.field(default=600, validator=InRange(1, 24 * 3600))


@attrs.frozen(kw_only=True)
class AgentCompactionConfig:
    """``agents.list[].compaction``: what one agent does differently."""

    strategy: str = ""  # empty: agents.defaults.compaction.strategy


@attrs.frozen(kw_only=True)
class SoftTrimConfig:
    max_chars: int = attrs.field(default=4_000, validator=InRange(100, 10_000_000))
    head_chars: int = attrs.field(default=1_500, validator=InRange(0, 10_000_000))
    tail_chars: int = attrs.field(default=1_500, validator=InRange(0, 10_000_000))

    def __attrs_post_init__(self) -> None:
        # A "trimmed" result longer than the results kept whole would grow the request.
        if self.head_chars + self.tail_chars > self.max_chars:
            raise OutOfRange("head_chars", f"head_chars + tail_chars ({self.head_chars} + {self.tail_chars}) must not exceed max_chars ({self.max_chars})")


@attrs.frozen(kw_only=True)
class HardClearConfig:
    enabled: bool = True
    placeholder: str = "[Old tool result content cleared]"


@attrs.frozen(kw_only=True)
class ContextPruningConfig:
    """Shrinking old tool results in the request (never in the transcript) once the
    provider's prompt cache has expired, so the re-cached prompt is smaller."""

    mode: Literal["cache-ttl", "off"] = "cache-ttl"
    ttl_seconds: int = attrs.field(default=300, validator=InRange(0, 7 * 24 * 3600))
    keep_last_assistants: int = attrs.field(default=3, validator=InRange(0, 1000))
    soft_trim_ratio: float = attrs.field(default=0.3, validator=InRange(0, 1))
    hard_clear_ratio: float = attrs.field(default=0.5, validator=InRange(0, 1))
    min_prunable_tool_chars: int = attrs.field(default=50_000, validator=InRange(0, 100_000_000))
    soft_trim: SoftTrimConfig = attrs.field(factory=SoftTrimConfig)
    hard_clear: HardClearConfig = attrs.field(factory=HardClearConfig)

    def __attrs_post_init__(self) -> None:
        # Clearing below the trimming threshold would clear results that trimming alone made fit.
        if self.hard_clear_ratio < self.soft_trim_ratio:
            raise OutOfRange("hard_clear_ratio", f"must be at least soft_trim_ratio ({self.soft_trim_ratio:g}), got {self.hard_clear_ratio:g}")
