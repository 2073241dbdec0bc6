"""Shared by the session tools: the group and compact number formats."""

from __future__ import annotations

from clawbot import Usage

GROUP = "sessions"


def usage_line(usage: Usage) -> str:
    line = f"{usage.input_tokens:,} in / {usage.output_tokens:,} out tokens"
    if usage.cache_read_tokens:
        line += f" (cache read {usage.cache_read_tokens:,})"
    return line


def cost_text(cost: float | None) -> str:
    return "unknown (no price configured)" if cost is None else f"${cost:.4f}"
