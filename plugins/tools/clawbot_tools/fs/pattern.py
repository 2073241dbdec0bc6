"""grep's regular expression: Python ``re`` syntax, matched by ``regex`` under a timeout.

The stdlib ``re`` cannot be interrupted, and a pattern such as ``(a+)+$`` backtracks for
hours on a line of a's ending in 'b'; the ``regex`` package takes a per-search
``timeout``. The pattern is first compiled by ``re`` so the model gets the syntax (and the
error messages) of Python's own regexes. ``regex`` also unrolls counted repetition at
compile time (``.{1000000}`` takes ~250 MB), so the product of the counts is capped.

:class:`Prefilter` rules files out before the per-line search, in two ways that are
sound for any pattern because each line is a substring of its file (the search never
looks past a line):

- strings one of which every match must contain, derived from the parsed pattern
  (``TODO|def handler_[0-9]+`` needs 'TODO' or 'def handler_'): a file holding none of
  them has no matching line. Anchors, lookarounds, word boundaries and the like count as
  matching the empty string, so their whole-file and per-line meanings never come into it.
- for a pattern made only of characters, classes, groups, alternation and greedy or lazy
  repetition, one search of the whole (small) file: whether such a pattern matches
  somewhere depends only on the text it matches, so a match inside a line is also a match
  inside the file. Anything whose outcome depends on the surrounding text is left out:
  anchors, ``\\b``, lookarounds, backreferences, atomic groups, possessive repeats.

Syntax that ``regex`` may read differently from ``re`` (whose parse is analysed here), such
as ``x{e<=1}`` or ``[[:alpha:]]``, gets no prefilter; nor does a pattern neither way applies
to (``^$``): every line of every file is then searched.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

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
        raise PatternError(f"pattern {pattern!r} repeats too much (its {{n}} counts multiply past {MAX_UNROLLED}); use + or * or smaller counts")
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


# --- the prefilter ------------------------------------------------------------------------

MAX_ALTERNATIVES = 16  # strings in one set of required strings; more and it is dropped
MAX_SET_EXPANSION = 8  # a class like [Tt] is expanded to its letters up to this many
MAX_EXACT_CHARS = 256  # an exact string is not grown past this

Strings = frozenset[str]
_BARE_BRACE = re.compile(r"(?:^|[^\\])(?:\\\\)*\{")  # a '{' after an even number of backslashes
_POSIX_CLASS = re.compile(r"\[[:=.]")  # [:alpha:], [=a=], [.a.]: regex reads these in a class, re does not


class _Unsafe(Exception):
    """The pattern uses syntax that ``regex`` may read differently from ``re``: no prefilter."""


class Prefilter:
    """``may_match(text)`` is False only when no line of ``text`` can match the pattern."""

    def __init__(self, strings: Iterable[str], ignore_case: bool, whole: regex.Pattern[str] | None, whole_limit: int) -> None:
        unique = set(strings)
        # a string holding another one adds nothing: finding it means finding the other
        self.strings = tuple(sorted(s for s in unique if not any(t != s and t in s for t in unique)))
        self.ignore_case = ignore_case
        # case-insensitively, the strings are matched by the same engine with the same flag,
        # so 'k' finds the Kelvin sign exactly when the pattern's own 'k' would
        self._folded = (
            regex.compile("|".join(regex.escape(s) for s in self.strings), regex.VERSION0 | regex.IGNORECASE) if ignore_case and self.strings else None
        )
        self.whole = whole  # the pattern itself, when one search of a whole file is as good as per line
        self.whole_limit = whole_limit  # longer files are not searched whole (memory, as for one line)

    @classmethod
    def for_pattern(cls, pattern: regex.Pattern[str], *, whole_text_limit: int) -> Prefilter | None:
        """The prefilter for a pattern from :func:`compile_pattern`, or ``None`` when none applies."""
        source = pattern.pattern
        ignore_case = bool(pattern.flags & regex.IGNORECASE)
        try:
            tree = sre_parse.parse(source, re.IGNORECASE if ignore_case else 0)
        except re.error:
            return None
        if tree.state.flags & sre_constants.SRE_FLAG_VERBOSE or _POSIX_CLASS.search(source):
            return None  # whitespace and '#' rules differ in corners between re and regex
        scan = _Scan(bool(tree.state.flags & sre_constants.SRE_FLAG_IGNORECASE), bool(_BARE_BRACE.search(source)))
        try:
            _, required = scan.sequence(tree)
        except _Unsafe:
            return None
        whole = pattern if scan.pure else None
        if not required and whole is None:
            return None
        return cls(required or (), scan.ignore_case, whole, whole_text_limit)

    def may_match(self, text: str, timeout: float) -> bool:
        """False when ``text`` has no line the pattern can match; True (search it) on a timeout."""
        try:
            if self.strings and not self._holds_a_string(text, timeout):
                return False
            if self.whole is not None and len(text) <= self.whole_limit:
                return self.whole.search(text, timeout=timeout) is not None
        except TimeoutError:
            pass
        return True

    def _holds_a_string(self, text: str, timeout: float) -> bool:
        if self._folded is None:
            return any(s in text for s in self.strings)
        return self._folded.search(text, timeout=timeout) is not None


class _Scan:
    """Per node: (exact, required): the set of all strings it can match when small, else None,
    and a set of strings one of which any of its matches contains, else None."""

    def __init__(self, ignore_case: bool, bare_brace: bool) -> None:
        self.ignore_case = ignore_case
        self.bare_brace = bare_brace  # the pattern has a '{' not escaped by a backslash
        # only characters, classes, groups, alternation, greedy or lazy repeats: whether it
        # matches depends on the matched text alone, not on what surrounds it
        self.pure = True

    def sequence(self, items: Iterable[tuple[object, object]]) -> tuple[Strings | None, Strings | None]:
        run: Strings | None = frozenset({""})  # the exact strings of the adjacent items so far
        broken = False
        required: Strings | None = None
        for op, value in items:
            exact, needed = self.item(op, value)
            required = _better(required, needed)
            if exact is None:
                required = _better(required, run)
                run, broken = frozenset({""}), True
                continue
            joined = _join(run, exact)
            if joined is None:  # too many or too long: what was gathered is still required
                required = _better(required, run)
                run, broken = exact, True
            else:
                run = joined
        required = _better(required, run)
        return (None if broken else run), required

    def item(self, op: object, value: object) -> tuple[Strings | None, Strings | None]:  # noqa: C901, PLR0911, PLR0912
        c = sre_constants
        if op is c.LITERAL:
            if value == ord("{") and self.bare_brace:  # regex reads 'x{e<=1}' as fuzzy matching, re as text
                raise _Unsafe
            return frozenset({chr(value)}), None  # type: ignore[arg-type]
        if op is c.IN:
            return self.char_class(value), None  # type: ignore[arg-type]
        if op in (c.AT, c.ASSERT, c.ASSERT_NOT):
            self.pure = False
            if op is not c.AT:
                self.check(value[1])  # type: ignore[index]
            return frozenset({""}), None  # zero-width: it matches no text of its own
        if op is c.SUBPATTERN:
            _, add_flags, _, body = value  # type: ignore[misc]
            if add_flags & sre_constants.SRE_FLAG_VERBOSE:
                raise _Unsafe
            if add_flags & sre_constants.SRE_FLAG_IGNORECASE:
                self.ignore_case = True
            return self.sequence(body)
        if op is getattr(c, "ATOMIC_GROUP", None):
            self.pure = False  # what it gives up depends on the text after it
            return self.sequence(value)  # type: ignore[arg-type]
        if op is c.BRANCH:
            return self.branch(value[1])  # type: ignore[index]
        if op in _REPEATS:
            if op not in (c.MAX_REPEAT, c.MIN_REPEAT):
                self.pure = False  # possessive, like an atomic group
            low, high, body = value  # type: ignore[misc]
            exact, needed = self.sequence(body)
            if high == 0:
                return frozenset({""}), None
            if low == 0:
                if high == 1 and exact is not None and len(exact) < MAX_ALTERNATIVES:
                    return exact | {""}, None  # 'colou?r'
                return None, None
            needed = _better(needed, exact)
            if low == high and exact is not None and low <= 8:
                repeated: Strings | None = frozenset({""})
                for _ in range(low):
                    repeated = _join(repeated, exact) if repeated is not None else None
                if repeated is not None:
                    return repeated, needed
            return None, needed
        if op in (c.ANY, c.NOT_LITERAL):
            return None, None  # one character, not known
        self.pure = False
        if op is c.GROUPREF_EXISTS:
            self.check(value[1])  # type: ignore[index]
            if value[2]:  # type: ignore[index]
                self.check(value[2])  # type: ignore[index]
        # \1, a conditional, anything new: no text known
        return None, None

    def check(self, items: Iterable[tuple[object, object]]) -> None:
        """Look through a part whose strings are not used, for the syntax that makes it all unsafe."""
        self.sequence(items)

    def char_class(self, members: list[tuple[object, object]]) -> Strings | None:
        c = sre_constants
        for op, value in members:  # [[:alpha:]]: a POSIX class to regex, a '[' then a ']' to re
            if (op is c.LITERAL and value == ord("[")) or (op is c.RANGE and value[0] <= ord("[") <= value[1]):  # type: ignore[index]
                raise _Unsafe
        chars: set[str] = set()
        for op, value in members:
            if op is c.LITERAL:
                chars.add(chr(value))  # type: ignore[arg-type]
            elif op is c.RANGE and value[1] - value[0] < MAX_SET_EXPANSION:  # type: ignore[index]
                chars.update(chr(n) for n in range(value[0], value[1] + 1))  # type: ignore[index]
            else:  # a negation, a category like \d, a wide range
                return None
        return frozenset(chars) if 0 < len(chars) <= MAX_SET_EXPANSION else None

    def branch(self, alternatives: list[list[tuple[object, object]]]) -> tuple[Strings | None, Strings | None]:
        exact: Strings | None = frozenset()
        required: Strings | None = frozenset()
        for alternative in alternatives:
            alt_exact, alt_required = self.sequence(alternative)
            exact = exact | alt_exact if exact is not None and alt_exact is not None else None
            best = _better(alt_required, alt_exact)
            required = required | best if required is not None and best is not None else None
        if exact is not None and len(exact) > MAX_ALTERNATIVES:
            exact = None
        if required is not None and len(required) > MAX_ALTERNATIVES:
            required = None
        return exact, required


def _join(left: Strings, right: Strings) -> Strings | None:
    """Every string of ``left`` followed by every one of ``right``; None when too many or too long."""
    if len(left) * len(right) > MAX_ALTERNATIVES:
        return None
    joined = frozenset(a + b for a in left for b in right)
    return None if any(len(s) > MAX_EXACT_CHARS for s in joined) else joined


def _better(first: Strings | None, second: Strings | None) -> Strings | None:
    """The more selective of two sets of required strings; a set holding '' requires nothing."""
    usable = [s for s in (first, second) if s and "" not in s and len(s) <= MAX_ALTERNATIVES]
    if not usable:
        return None
    return max(usable, key=lambda s: (min(len(x) for x in s), -len(s)))
