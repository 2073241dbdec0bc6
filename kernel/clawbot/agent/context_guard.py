"""Refusing models whose context window cannot hold the prompt, before paying for a call.

A model with a window under 16,000 tokens is not usable for an agent at all; a prompt
whose estimate (about 4 characters per token) exceeds the window is a context overflow
before the provider says so, which lets a larger fallback model or compaction take over.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from clawbot.config.schema import MIN_CONTEXT_TOKENS
from clawbot.tokens import chars_for_tokens, estimate_tokens
from clawbot.types import Message, ModelRequest, ProviderError, TextBlock, ThinkingBlock, ToolCallBlock

__all__ = ["MIN_CONTEXT_TOKENS", "check", "messages_tokens", "request_tokens"]
IMAGE_TOKENS = 1600
"""What an image costs, roughly."""


def _message_chars(messages: Iterable[Message]) -> int:
    chars = 0
    for message in messages:
        for block in message.content:
            if isinstance(block, TextBlock | ThinkingBlock):
                chars += len(block.text)
            elif isinstance(block, ToolCallBlock):
                chars += len(block.name) + len(block.raw_arguments or json.dumps(block.arguments))
            else:
                chars += chars_for_tokens(IMAGE_TOKENS)
    return chars


def messages_tokens(messages: Iterable[Message]) -> int:
    """The messages' estimated size in tokens."""
    return estimate_tokens(_message_chars(messages))


def fixed_chars(request: ModelRequest) -> int:
    """The characters of the request's system prompt and tool schemas."""
    chars = len(request.system.text)
    for spec in request.tools:
        chars += len(spec.name) + len(spec.description) + len(json.dumps(spec.parameters))
    return chars


def request_tokens(request: ModelRequest, fixed: int | None = None) -> int:
    """The request's estimated size in tokens (system prompt, tool schemas, messages);
    ``fixed``: :func:`fixed_chars` of it, when the caller knows them already."""
    return estimate_tokens((fixed_chars(request) if fixed is None else fixed) + _message_chars(request.messages))


def check(ref: str, context_window: int, request: ModelRequest) -> ProviderError | None:
    """``None`` when the request fits; else the reason, as a context_overflow error."""
    if context_window < MIN_CONTEXT_TOKENS:
        return ProviderError(
            "context_overflow",
            f"{ref} has a context window of {context_window:,} tokens; at least {MIN_CONTEXT_TOKENS:,} are needed",
        )
    estimate = request_tokens(request) + (request.max_output_tokens or 0)
    if estimate > context_window:
        return ProviderError("context_overflow", f"the prompt needs about {estimate:,} tokens; {ref} holds {context_window:,}")
    return None
