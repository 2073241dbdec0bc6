"""What a safe bin may be run with, unasked, in ``allowlist`` mode: options and operands.

A safe bin (``[plugins.tools.exec] safe_bins``) runs without asking only when its whole
argument list is provably harmless:

* every option is on that bin's allow-list (:mod:`.safe_bin_specs`), spelt out exactly. GNU tools take any
  unambiguous prefix of a long option (``sort --co=sh`` is ``--compress-program=sh``), so
  an unknown long option asks whether or not it abbreviates a listed one. Options that
  write files (``sort -o``), run programs (``sort --compress-program``), read lists of
  other files (``--files0-from``), follow symlinks out of a tree (``grep -R``) or change
  the system (``date -s``) are on no list;
* every argument is a fixed word: no ``$``, brace expansion or value filled in later
  (``find -exec``'s ``{}``; ``xargs`` is never looked through). A glob operand must start
  with a fixed character other than ``-`` (``./*.txt`` rather than ``*.txt``, which
  could expand to a file named ``--compress-program=sh``); a glob given as a separate
  option value, or where the bin wants text (a pattern), asks; so does a glob for bins
  whose operand count changes what they do (``uniq IN OUT`` writes OUT);
* which files it reads is the sandbox's business, not this module's: inside an OS sandbox
  (``confined``) a file operand is whatever the sandbox lets the command read. Without one,
  safe bins are stdin-only: a file operand or a ``-f FILE`` value asks, and so does reading
  a directory that is not the one the command started in (``ls`` after ``cd``).

A name in ``safe_bins`` without a table runs unasked only without options, and with at
most one operand (``xxd IN OUT`` writes OUT).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from clawbot_tools.runtime.safe_bin_specs import (
    FLAG,
    OPTIONAL,
    PATH,
    SPECS,
    TEXT,
    UNKNOWN,
    VALUE,
    Spec,
)
from clawbot_tools.runtime.shell_lexer import GLOB_CHARS, Word

STDIN_NAMES = frozenset({"-", "/dev/stdin", "/dev/null"})  # operands that read no file
ENDLESS_DEVICES = frozenset({"/dev/zero", "/dev/urandom", "/dev/random"})
SPILLS_TO_DISK = frozenset({"sort"})  # reads all its input, writing temporary files beyond its buffer
DIGITS = re.compile(r"-[0-9]+")  # ASCII only: str.isdigit and \d accept "²" and "٣"


def check(
    name: str,
    argv: Sequence[Word],
    *,
    confined: bool,
    cwd_known: bool,
    names_outside: Callable[[str], bool] | None = None,
) -> str | None:
    """Why running safe bin ``name`` with ``argv`` is not provably harmless, or ``None``.

    ``confined``: the command runs inside an OS sandbox; ``cwd_known``: it runs in the
    directory the command line started in (no ``cd`` before it); ``names_outside``: for a
    sandbox that hides contents but not names (Landlock), which file names could tell
    whether something outside exists (those ask).
    """
    checker = _Checker(name, SPECS.get(name, UNKNOWN), confined=confined, cwd_known=cwd_known, names_outside=names_outside)
    return checker.run(list(argv[1:]))


class _Checker:
    def __init__(self, name: str, spec: Spec, *, confined: bool, cwd_known: bool, names_outside: Callable[[str], bool] | None) -> None:
        self.name, self.spec, self.confined, self.cwd_known = name, spec, confined, cwd_known
        self.names_outside = names_outside
        self.pattern_given = False  # grep -e / -f: every operand is a file
        self.recursive = False  # grep -r: no operand means the current directory

    def run(self, args: list[Word]) -> str | None:
        if self.spec.operands == "free":  # only prints its arguments
            return next((self._unfixed(w) for w in args if _unfixed(w)), None)
        operands: list[tuple[Word, bool]] = []
        end_of_options = False
        i = 0
        while i < len(args):
            word = args[i]
            text = word.value
            i += 1
            if end_of_options or text == "-" or not text.startswith("-"):
                operands.append((word, end_of_options))
                continue
            if _unfixed(word):
                return self._unfixed(word)
            if text == "--":
                end_of_options = True
                continue
            if self.spec.numeric and DIGITS.fullmatch(text):
                continue
            reason, i = self._long(word, args, i) if text.startswith("--") else self._short(word, args, i)
            if reason:
                return reason
        return self._operands(operands)

    # --- options ------------------------------------------------------------------------

    def _long(self, word: Word, args: list[Word], i: int) -> tuple[str | None, int]:
        key, eq, value = word.value[2:].partition("=")
        kind = self.spec.long.get(key)
        if kind is None:
            return self._not_allowed(f"--{key}"), i
        if kind == FLAG and eq:
            return f"{self.name} option --{key} takes no value", i
        if key in ("regexp", "file"):
            self.pattern_given = True
        if key == "recursive" or (key == "directories" and value == "recurse"):
            self.recursive = True
        if eq:
            return self._value(word, value, kind, attached=True), i
        if kind in (VALUE, PATH) and i < len(args):
            if key == "directories" and args[i].value == "recurse":
                self.recursive = True
            return self._value(args[i], args[i].value, kind, attached=False), i + 1
        return None, i

    def _short(self, word: Word, args: list[Word], i: int) -> tuple[str | None, int]:
        text = word.value
        j = 1
        while j < len(text):
            letter = text[j]
            kind = self.spec.short.get(letter)
            if kind is None:
                return self._not_allowed(f"-{letter}", word.raw), i
            j += 1
            if self.name == "grep" and letter == "r":
                self.recursive = True
            if kind == FLAG:
                continue
            if self.name == "grep" and letter in "ef":
                self.pattern_given = True
            value = text[j:]
            if value or kind == OPTIONAL:
                if self.name == "grep" and letter == "d" and value == "recurse":
                    self.recursive = True
                return self._value(word, value, kind, attached=True), i
            if i < len(args):
                if self.name == "grep" and letter == "d" and args[i].value == "recurse":
                    self.recursive = True
                return self._value(args[i], args[i].value, kind, attached=False), i + 1
            return None, i
        return None, i

    def _value(self, word: Word, value: str, kind: str, *, attached: bool) -> str | None:
        if _unfixed(word):
            return self._unfixed(word)
        if word.glob:
            if not attached:
                return f"the value {word.raw!r} of a {self.name} option is a glob (it could expand to several words); quote it"
            if kind == PATH:
                return f"the file named in {word.raw!r} is a glob; name the file exactly"
            return None  # --include=*.py: each expansion is the same option again
        if kind != PATH:
            return None
        return self._file(value)

    # --- operands -----------------------------------------------------------------------

    def _operands(self, operands: list[tuple[Word, bool]]) -> str | None:
        spec = self.spec
        if spec.max_operands is not None and len(operands) > spec.max_operands:
            return f"writes a file ({self.name} INPUT OUTPUT)"
        if not spec.known and len(operands) > 1:
            return f"{self.name} has no list of harmless options, so it runs unasked only with one operand (a second one may be written)"
        files = 0
        for index, (word, after_dashes) in enumerate(operands):
            if _unfixed(word):
                return self._unfixed(word)
            kind = PATH
            if spec.operands == TEXT or (spec.operands == "grep" and index == 0 and not self.pattern_given):
                kind = TEXT
            elif spec.operands == "date":
                if not word.value.startswith("+"):
                    return f"sets the clock ({self.name} {word.value})"
                kind = TEXT
            if kind == TEXT:
                if word.glob:
                    return f"the argument {word.raw!r} of {self.name} is a glob the shell may replace with file names; quote it"
                continue
            files += 1
            if word.glob and (spec.max_operands is not None or not spec.known):
                return (
                    f"the glob {word.raw!r} may expand to several files, and {self.name} treats a further operand "
                    "differently (it may write it); name the files exactly"
                )
            reason = self._glob(word, after_dashes) if word.glob else self._file(word.value)
            if reason:
                return reason
        reads_cwd = spec.reads_cwd or (self.name == "grep" and self.recursive)
        if files == 0 and reads_cwd and not self.confined and not self.cwd_known:
            return f"{self.name} reads a directory that is not known after cd (without a sandbox, exec asks before a command reads files)"
        return None

    def _file(self, text: str) -> str | None:
        if text in ENDLESS_DEVICES and self.name in SPILLS_TO_DISK:
            return f"{self.name} would read {text} without end, writing temporary files until the disk is full"
        if text in STDIN_NAMES:
            return None
        if self.confined:
            if self.names_outside is not None and self.names_outside(text):
                return f"{self.name} would tell whether {text} exists (this sandbox hides what files outside hold, not whether they exist)"
            return None
        return f"{self.name} reads the file {text} (without a sandbox, exec asks before a command reads files)"

    def _glob(self, word: Word, after_dashes: bool) -> str | None:
        if not after_dashes and word.value[:1] in GLOB_CHARS:
            return (
                f"the glob {word.raw!r} could expand to a file name starting with '-', which {self.name} would take for an option; write ./{word.raw} instead"
            )
        if not self.confined:
            return f"{self.name} reads the files {word.raw} matches (without a sandbox, exec asks before a command reads files)"
        return None

    # --- reasons ------------------------------------------------------------------------

    def _not_allowed(self, option: str, raw: str | None = None) -> str:
        shown = option if raw is None or raw == option else f"{option} (in {raw})"
        if not self.spec.known:
            return f"{self.name} has no list of harmless options, so it runs unasked only without options (got {shown})"
        return f"{self.name} option {shown} is not on its list of read-only options"

    def _unfixed(self, word: Word) -> str:
        return f"the argument {word.raw!r} of {self.name} is not a fixed word"


def _unfixed(word: Word) -> bool:
    return word.expands or word.brace or word.placeholder
