"""grep's regular expression: Python ``re`` syntax, matched by ``regex`` under a timeout.

The stdlib ``re`` cannot be interrupted, and a pattern such as ``(a+)+$`` backtracks for
hours on a line of a's ending in 'b'; the ``regex`` package takes a per-search
``timeout``. The pattern is first compiled by ``re`` so the model gets the syntax (and the
error messages) of Python's own regexes. ``regex`` also unrolls counted repetition at
compile time (``.{1000000}`` takes ~250 MB), so the product of the counts is capped.
"""

from __future__ import annotations

import re

import regex

try:
    from re import _constants as sre_constants
    from re import _parser as sre_parse
except ImportError:  # pragma: no cover - Python versions without re._parser
    import sre_constants  # type: ignore[no-redef]
    import sre_parse  # type: ignore[no-redef]

MAX_PATTERN_CHARS = 2000
MAX_UNROLLED = 20_000
_REPEATS = {sre_constants.MAX_REPEAT, sre_constants.MIN_REPEAT, getattr(sre_constants, "POSSESSIVE_REPEAT", None)}


class PatternError(ValueError):
    """A pattern grep will not run; ``str(exc)`` is the message for the model."""


def compile_pattern(pattern: str, *, ignore_case: bool) -> regex.Pattern[str]:
    if len(pattern) > MAX_PATTERN_CHARS:
        raise PatternError(f"pattern is too long ({len(pattern)} characters; the limit is {MAX_PATTERN_CHARS})")
    try:
        re.compile(pattern, re.IGNORECASE if ignore_case else 0)
        tree = sre_parse.parse(pattern, re.IGNORECASE if ignore_case else 0)
    except re.error as exc:
        raise PatternError(f"invalid regular expression {pattern!r}: {exc}") from None
    if _unrolled(tree) > MAX_UNROLLED:
        raise PatternError(
            f"pattern {pattern!r} repeats too much (its {{n}} counts multiply past {MAX_UNROLLED}); "
            "use + or * or smaller counts"
        )
    try:
        return regex.compile(pattern, regex.VERSION0 | (regex.IGNORECASE if ignore_case else 0))
    except regex.error as exc:
        raise PatternError(f"invalid regular expression {pattern!r}: {exc}") from None


def _unrolled(items: object) -> int:
    """Roughly how many pieces the pattern becomes once counted repeats are written out."""
    total = 0
    for op, value in items:  # type: ignore[attr-defined]
        if op in _REPEATS:
            low, high, body = value
            count = low if high == sre_constants.MAXREPEAT else high
            total += max(1, count) * _unrolled(body)
        elif op == sre_constants.SUBPATTERN:
            total += _unrolled(value[-1])
        elif op == sre_constants.BRANCH:
            total += sum(_unrolled(branch) for branch in value[1])
        elif op in (sre_constants.ASSERT, sre_constants.ASSERT_NOT):
            total += _unrolled(value[1])
        elif op == getattr(sre_constants, "ATOMIC_GROUP", None):
            total += _unrolled(value)
        elif op == sre_constants.GROUPREF_EXISTS:
            total += _unrolled(value[1]) + (_unrolled(value[2]) if value[2] else 0)
        else:
            total += 1
        if total > MAX_UNROLLED:
            break  # already too much; nested counts would only make huge numbers
    return total
