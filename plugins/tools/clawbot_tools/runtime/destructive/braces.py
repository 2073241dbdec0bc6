"""Bash brace expansion of one word (``{a,b}``, ``{1..3}``, ``{a..c}``), bounded."""

from __future__ import annotations

import re

_BRACE_LIST = re.compile(r"\{([^{},]*+,[^{}]*+)\}")
_BRACE_RANGE = re.compile(r"\{(-?\d{1,6}|[A-Za-z])\.\.(-?\d{1,6}|[A-Za-z])\}")
MAX_BRACE_WORDS = 64


def brace_words(word: str) -> list[str]:
    """The words bash makes of ``word`` by brace expansion (at most 64; ``word`` itself if none)."""
    words = [word]
    for _ in range(8):
        expanded: list[str] = []
        changed = False
        for item in words:
            alternatives = _one_brace(item)
            changed = changed or alternatives is not None
            expanded.extend(alternatives if alternatives is not None else [item])
            if len(expanded) >= MAX_BRACE_WORDS:
                return expanded[:MAX_BRACE_WORDS]
        words = expanded
        if not changed:
            break
    return words


def _one_brace(word: str) -> list[str] | None:
    match = _BRACE_LIST.search(word)
    if match is not None:
        parts = match.group(1).split(",")
    else:
        match = _BRACE_RANGE.search(word)
        if match is None:
            return None
        low, high = match.group(1), match.group(2)
        if low.lstrip("-").isdigit() and high.lstrip("-").isdigit():
            a, b = int(low), int(high)
            step = 1 if b >= a else -1
            parts = [str(n) for n in range(a, b + step, step)][:MAX_BRACE_WORDS]
        elif low.isalpha() and high.isalpha():
            step = 1 if ord(high) >= ord(low) else -1
            parts = [chr(n) for n in range(ord(low), ord(high) + step, step)]
        else:
            return None
    return [word[: match.start()] + part + word[match.end() :] for part in parts]
