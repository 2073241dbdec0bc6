"""Refusing models whose context window cannot hold the prompt, before paying for a call.

A model with a window under 16,000 tokens is not usable for an agent at all; a prompt
whose estimate (about 4 characters per token) exceeds the window is a context overflow
before the provider says so, which lets a larger fallback model or compaction take over.
"""

from __future__ import annotations

import json

from clawbot.types import ModelRequest, ProviderError, TextBlock, ThinkingBlock, ToolCallBlock

MIN_CONTEXT_TOKENS = 16_000
CHARS_PER_TOKEN = 4


def estimate_tokens(request: ModelRequest) -> int:
    chars = len(request.system.text)
    for spec in request.tools:
        chars += len(spec.name) + len(spec.description) + len(json.dumps(spec.parameters))
    for message in request.messages:
        for block in message.content:
            if isinstance(block, TextBlock | ThinkingBlock):
                chars += len(block.text)
            elif isinstance(block, ToolCallBlock):
                chars += len(block.name) + len(block.raw_arguments or json.dumps(block.arguments))
            else:
                chars += 1600 * CHARS_PER_TOKEN  # an image costs roughly this much
    return chars // CHARS_PER_TOKEN


def check(ref: str, context_window: int, request: ModelRequest) -> ProviderError | None:
    """``None`` when the request fits; else the reason, as a context_overflow error."""
    if context_window < MIN_CONTEXT_TOKENS:
        return ProviderError(
            "context_overflow",
            f"{ref} has a context window of {context_window:,} tokens; at least {MIN_CONTEXT_TOKENS:,} are needed",
        )
    estimate = estimate_tokens(request) + (request.max_output_tokens or 0)
    if estimate > context_window:
        return ProviderError("context_overflow", f"the prompt needs about {estimate:,} tokens; {ref} holds {context_window:,}")
    return None
