"""The identifiers a summary must keep word for word, found without a model.

A summary that says "the config file" where the user wrote ``/srv/app/config.yaml`` has
lost the fact that matters. These patterns find what a later turn would need verbatim:
paths, URLs, e-mail addresses, dates and times, numbers with units, versions, ids and
hashes, code names (CamelCase, snake_case) and inline code (commands). Those a summary
lacks are appended to it, under who or what wrote them (:mod:`kept`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

_COMMON_TLDS = "com|net|org|io|dev|ai|app|cloud|internal|local|lan|corp"
_MONTHS = r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)"
_UNITS = (
    r"(?:ms|µs|ns|s|sec|secs|seconds?|mins?|minutes?|h|hrs?|hours?|days?|weeks?|months?|years?"
    r"|[KMGTP]i?B|[kKMGT]b|bytes?|B|%|px|pt|em|rem|°C|°F|[kKM]?Hz|[kKM]?W|[km]?m|cm|mm|kg|g|mg|lbs?"
    r"|USD|EUR|GBP|CHF|JPY|CNY|€|£|tokens?|rps|qps|req/s|cores?|CPUs?|GPUs?|x)"
)

# A bare file name counts when it ends in one of these
_EXTENSIONS = (
    "py|pyi|js|jsx|ts|tsx|mjs|json|toml|ya?ml|md|txt|csv|tsv|ini|cfg|conf|env|sh|bash|zsh|rs|go|java|kt|c|h|cc|cpp|hpp|cs|rb|php"
    "|swift|sql|db|sqlite|log|lock|html|css|scss|xml|pdf|png|jpe?g|gif|svg|zip|tar|gz|tgz|whl|ipynb|dockerfile"
)

#: (kind, pattern) in order of priority: where two matches overlap, the longer one is kept
PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("url", re.compile(r"\b(?:https?|ftp|wss?|file)://[^\s<>\"'`()\[\]{}]+")),
    ("email", re.compile(r"\b[\w.+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b")),
    ("code", re.compile(r"`([^`\n]{2,120})`")),
    ("path", re.compile(r"(?<![\w/:.])(?:~|\.{1,2})?/(?:[\w.@%+~-]+/)*[\w.@%+~-]+/?|\b[A-Za-z]:\\(?:[\w .-]+\\)*[\w .-]+")),
    ("path", re.compile(rf"(?<![\w/:.@-])(?:[\w.-]+/)+[\w.-]*\.[A-Za-z0-9]{{1,8}}\b|(?<![\w/.-])[\w-]+(?:\.[\w-]+)*\.(?:{_EXTENSIONS})\b")),
    ("date", re.compile(r"\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?\b")),
    ("date", re.compile(rf"\b\d{{1,2}}(?:st|nd|rd|th)? {_MONTHS}\.? \d{{4}}\b|\b{_MONTHS}\.? \d{{1,2}}(?:st|nd|rd|th)?,? \d{{4}}\b")),
    ("date", re.compile(r"\b\d{1,2}[/.]\d{1,2}[/.]\d{2,4}\b")),
    ("time", re.compile(r"\b\d{1,2}:\d{2}(?::\d{2})?(?:\s?[AaPp][Mm])?\b")),
    ("uuid", re.compile(r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b")),
    ("hash", re.compile(r"\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,64}\b")),
    ("version", re.compile(r"\bv?\d+\.\d+(?:\.\d+)+(?:[-+][\w.]+)?\b|\bv\d+(?:\.\d+)?\b")),
    # host names: three labels or more (api.eu.example.com), or two where the name has a
    # digit or a hyphen (db-7.internal) or ends in a common top-level domain (example.com)
    ("host", re.compile(r"(?<![\w.@/-])(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.){2,}[A-Za-z]{2,24}\b(?![\w/-])(?!\.[\w-])")),
    ("host", re.compile(r"(?<![\w.@/-])(?=[\w.-]*[\d-])[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.[A-Za-z]{2,24}\b(?![\w/-])(?!\.[\w-])")),
    ("host", re.compile(rf"(?<![\w.@/-])[A-Za-z0-9](?:[A-Za-z0-9-]{{0,61}}[A-Za-z0-9])?\.(?:{_COMMON_TLDS})\b(?![\w/-])(?!\.[\w-])")),
    ("ip", re.compile(r"\b\d{1,3}(?:\.\d{1,3}){3}(?::\d{1,5})?\b")),
    ("ticket", re.compile(r"\b[A-Z][A-Z0-9]{1,9}-\d+\b|(?<![\w&])#\d{2,}\b")),
    ("money", re.compile(r"[$€£¥]\s?\d+(?:[.,]\d+)*(?:\s?[kKmMbB]n?)?\b")),
    ("quantity", re.compile(rf"(?<![\w.])\d+(?:[.,]\d+)*\s?{_UNITS}(?![\w])")),
    ("name", re.compile(r"\b[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+\b|\b[a-z][a-z0-9]*(?:[A-Z][a-z0-9]*)+\b")),
    ("name", re.compile(r"\b[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+\b|\b_[A-Za-z0-9_]+\b")),
    ("id", re.compile(r"\b(?=[A-Za-z_-]*\d)(?=\d*[A-Za-z])[A-Za-z0-9]+(?:[_-][A-Za-z0-9]+)+\b")),
    ("number", re.compile(r"(?<![\w.,])\d{4,}(?:[.,]\d+)*\b|(?<![\w.,])\d+[.,]\d+\b")),
)

# Trailing punctuation a sentence adds to a URL or a path, never part of it
_TRAILING = ".,;:!?)]}'\""


def extract(text: str) -> list[tuple[str, str]]:
    """``(kind, identifier)`` pairs in ``text``, in order of appearance, without overlaps:
    a match inside a longer one (``2026`` in ``2026-01-15``) is left out."""
    spans: list[tuple[int, int, str, str]] = []
    for kind, pattern in PATTERNS:
        for match in pattern.finditer(text):
            group = 1 if pattern.groups else 0
            value = match.group(group)
            start = match.start(group)
            if kind in ("url", "path"):
                value = value.rstrip(_TRAILING)
            value = value.strip()
            if len(value) < 2 or (kind == "path" and value in ("/", "./", "../", "~/")):
                continue
            spans.append((start, start + len(value), kind, value))
    # the longest match wins where matches overlap (a path holds a file name, a date a year)
    spans.sort(key=lambda s: (-(s[1] - s[0]), s[0]))
    taken: list[tuple[int, int]] = []
    kept: list[tuple[int, str, str]] = []
    for start, end, kind, value in spans:
        if any(start < t_end and t_start < end for t_start, t_end in taken):
            continue
        taken.append((start, end))
        kept.append((start, kind, value))
    kept.sort()
    return [(kind, value) for _, kind, value in kept]


def identifiers(texts: Iterable[str], limit: int = 200) -> list[str]:
    """The distinct identifiers of ``texts``, first appearance first, at most ``limit``."""
    seen: dict[str, None] = {}
    for text in texts:
        for _, value in extract(text):
            seen.setdefault(value, None)
            if len(seen) >= limit:
                return list(seen)
    return list(seen)


__all__ = ["PATTERNS", "extract", "identifiers"]
