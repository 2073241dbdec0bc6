"""What a safe bin may be run with, unasked, in ``allowlist`` mode: options, operands, files.

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
  option value, or where the bin wants text (a pattern), asks;
* every file it reads resolves (``~`` expanded, relative to the command's directory,
  symlinks followed) inside the workspace: path operands, ``-f FILE``-style values, and
  the current directory for ``ls`` and ``grep -r`` without operands. Paths are resolved
  with :func:`~clawbot_tools.runtime.executables.real_path` (a step through ``/proc``
  asks). A glob operand is checked by its fixed directory and by every entry it *could*
  match when the check runs: each run of ``*``/``?``/``[...]`` may stand for any text
  (Python's glob is not the shell's), and a glob component that starts with ``.`` or
  could match ``.`` or ``..`` asks (dash and older bash match them with ``.*``). A glob operand also
  asks for bins whose operand count changes what they do (``uniq IN OUT`` writes OUT) and
  for names without a table.

The tables live in :mod:`.safe_bin_specs`. A name in ``safe_bins`` without a table runs unasked only without options, and with
at most one operand: a path inside the workspace (``xxd IN OUT`` writes OUT).
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence

from clawbot_tools.runtime.executables import (
    Unplaceable,
    inside,
    place,
    real_path,
    spend,
)
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

READABLE_DEVICES = frozenset({"-", "/dev/null", "/dev/stdin", "/dev/zero", "/dev/urandom"})
ENDLESS_DEVICES = frozenset({"/dev/zero", "/dev/urandom"})
SPILLS_TO_DISK = frozenset({"sort"})  # reads all its input, writing temporary files beyond its buffer
MAX_GLOB_MATCHES = 2000
DIGITS = re.compile(r"-[0-9]+")  # ASCII only: str.isdigit and \d accept "²" and "٣"


def check(name: str, argv: Sequence[Word], *, cwd: str | None, workspace: str, home: str | None) -> str | None:
    """Why running safe bin ``name`` with ``argv`` is not provably harmless, or ``None``."""
    return _Checker(name, SPECS.get(name, UNKNOWN), cwd, real_path(workspace) or workspace, home).run(list(argv[1:]))


class _Checker:
    def __init__(self, name: str, spec: Spec, cwd: str | None, workspace: str, home: str | None) -> None:
        self.name, self.spec, self.cwd, self.workspace, self.home = name, spec, cwd, workspace, home
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
        if attached and value.startswith("~"):  # bash expands ~ after "=", dash does not: both must be inside
            return self._path(value, word.raw, tilde=False) or self._path(value, word.raw, tilde=True)
        return self._path(value, word.raw, tilde=word.tilde and not attached)

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
            reason = self._glob(word, after_dashes) if word.glob else self._path(word.value, word.raw, tilde=word.tilde)
            if reason:
                return reason
        if files == 0 and (spec.reads_cwd or (self.name == "grep" and self.recursive)):
            if self.cwd is None:
                return f"cannot tell which directory {self.name} reads (it is not known after cd)"
            if not inside(self.workspace, self.cwd):
                return f"{self.name} reads the directory {self.cwd}, outside the workspace"
        return None

    def _path(self, text: str, raw: str, *, tilde: bool) -> str | None:
        if text in READABLE_DEVICES:
            if text in ENDLESS_DEVICES and self.name in SPILLS_TO_DISK:
                return f"{self.name} would read {text} without end, writing temporary files until the disk is full"
            return None
        try:
            real = place(text, raw, tilde=tilde, cwd=self.cwd, home=self.home)
        except Unplaceable as exc:
            return f"cannot tell {exc}"
        if inside(self.workspace, real):
            return None
        return f"{self.name} reads {text} outside the workspace"

    def _glob(self, word: Word, after_dashes: bool) -> str | None:
        raw, pattern = word.raw, word.value
        if not after_dashes and pattern[:1] in GLOB_CHARS:
            return (
                f"the glob {raw!r} could expand to a file name starting with '-', which {self.name} would take "
                f"for an option; write ./{raw} instead"
            )
        if word.quoted:
            return f"the glob {raw!r} mixes quoted and unquoted characters; it cannot be checked"
        if ".." in pattern.split("/"):
            return f"the glob {raw!r} contains '..'; it cannot be checked"
        if word.tilde:
            if not self.home or not pattern.startswith("~/"):
                return f"cannot tell which files {raw!r} names (~user, or no home directory)"
            pattern = self.home + pattern[1:]
        if not os.path.isabs(pattern) and self.cwd is None:
            return f"cannot tell which files {raw!r} names (the directory is not known after cd)"
        full = os.path.join(self.cwd or "/", pattern)
        parts = full.split("/")
        first_glob = next((k for k, part in enumerate(parts) if any(c in part for c in GLOB_CHARS)), len(parts))
        for part in parts[first_glob:]:
            if not any(c in part for c in GLOB_CHARS):
                continue
            loose = _loose(part)
            if part.startswith(".") or loose.fullmatch(".") or loose.fullmatch(".."):
                return (
                    f"the glob {raw!r} has a part ({part}) the shell may match with '.' or '..' "
                    "(dash does for '.*'); it cannot be checked"
                )
        fixed = "/".join(parts[:first_glob]) or "/"
        real_fixed = real_path(fixed)
        if real_fixed is None:
            return f"cannot tell which files {raw!r} names (it goes through /proc, or through too many symlinks)"
        if not inside(self.workspace, real_fixed):
            return f"{self.name} reads {pattern} outside the workspace"
        # the word itself (what the shell passes when nothing matches) and every entry it could match
        candidates = [full, *_could_match(fixed, parts[first_glob:])]
        for count, match in enumerate(candidates):
            if count > MAX_GLOB_MATCHES:
                return f"the glob {raw!r} matches more than {MAX_GLOB_MATCHES} files; they cannot all be checked"
            real = real_path(match)
            if real is None:
                return f"cannot tell which file {match} (matched by {raw}) is (it goes through /proc, or through too many symlinks)"
            if not inside(self.workspace, real):
                return f"{self.name} reads {match} (matched by {raw}) outside the workspace"
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


def _loose(part: str) -> re.Pattern[str]:
    """A regex matching at least every name the shell's pattern ``part`` matches.

    ``*`` and ``?`` stand for any text (``?`` for one or more characters: a multibyte
    character is several bytes in the C locale), and everything from the first ``[`` to
    the last ``]`` for any text: bracket expressions (``[!a]``, ``[^a]``, ``[[:alpha:]]``)
    and locale rules are over-approximated, never guessed. A leading ``*``/``?`` does not
    match a leading ``.`` in any shell; one that starts with ``[`` may (so dot files are
    candidates, and a part this could match ``.`` or ``..`` with asks).
    """
    start, end = part.find("["), part.rfind("]")
    brackets = (start, end) if 0 <= start < end else (-1, -1)
    out = ["(?!\\.)"] if part[:1] in "*?" else []
    i = 0
    while i < len(part):
        c = part[i]
        if i == brackets[0]:
            out.append(".*")
            i = brackets[1] + 1
        elif c == "*":
            out.append(".*")
            i += 1
        elif c == "?":
            out.append(".+")
            i += 1
        else:
            out.append(re.escape(c))
            i += 1
    return re.compile("".join(out), re.S)


def _could_match(fixed: str, parts: list[str]) -> list[str]:
    """Every existing path under ``fixed`` that the pattern ``parts`` could match (an over-approximation)."""
    current = [fixed]
    for index, part in enumerate(parts):
        if not part:
            continue
        if not any(c in part for c in GLOB_CHARS):
            current = [os.path.join(path, part) for path in current]
            continue
        pattern = _loose(part)
        last = index == len(parts) - 1
        found: list[str] = []
        for directory in current:
            try:
                with os.scandir(directory) as entries:
                    for entry in entries:
                        spend(entries=1)
                        if pattern.fullmatch(entry.name) and (last or _is_dir(entry)):
                            found.append(os.path.join(directory, entry.name))
                            if len(found) > MAX_GLOB_MATCHES:
                                return found
            except OSError:
                continue
        current = found
    return current


def _is_dir(entry: os.DirEntry) -> bool:
    try:
        # a symlink counts as a directory: where it leads is judged by real_path, not here
        return entry.is_symlink() or entry.is_dir()
    except OSError:
        return True
