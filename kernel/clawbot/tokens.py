"""The rough token estimate used wherever clawbot has characters and needs tokens.

About four characters a token is the providers' own rule of thumb for English text and
code; it is only ever used for decisions with a margin (does the prompt fit the window, how
much of a tool result to keep, the sizes ``clawbot context`` reports), never for billing,
which uses the usage the provider reports. One place, so every figure a user sees agrees.
Public: a compaction or context plugin estimates exactly as the kernel does.
"""

from __future__ import annotations

CHARS_PER_TOKEN = 4


def estimate_tokens(text: str | int) -> int:
    """Tokens in ``text`` (or in that many characters), rounded up: 1-4 characters are 1."""
    chars = text if isinstance(text, int) else len(text)
    return -(-max(0, chars) // CHARS_PER_TOKEN)


def chars_for_tokens(tokens: int) -> int:
    """How many characters ``tokens`` tokens hold, the inverse of :func:`estimate_tokens`."""
    return tokens * CHARS_PER_TOKEN


__all__ = ["CHARS_PER_TOKEN", "chars_for_tokens", "estimate_tokens"]
