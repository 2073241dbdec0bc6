"""Splitting a shell command line into words and operators, the way ``/bin/sh`` would.

``exec`` decides what may run by looking at every program a command line starts, so it
must read the line as the shell does: quotes, escapes and line continuations are undone
(``r\\m``, ``"rm"`` and ``'r'm`` are all the word ``rm``), and operators (``|``, ``;``,
``&&``, ``(``, ``)`` ...) split commands.

What the lexer cannot resolve statically is not guessed at. It is reported in
``Lexed.problems`` (so the line asks in ``allowlist`` mode): command substitution
(``$(...)``, backticks), arithmetic expansion (``$((...))``, ``$[...]``), any ``${...}``
other than a plain ``${NAME}`` (where the shell ends such an expansion is easy to get
wrong: ``${x-{}`` ends at the first ``}``), process substitution (``<(...)``), parentheses
(subshells, ``(( ))``, function definitions), ``$``-forms or backticks in the body of an
unquoted here-document, and unclosed quotes. A word is also flagged when its value is not
fixed: ``expands`` (a simple ``$NAME`` / ``${NAME}`` / ``$1`` / ``$?`` / ``$'...'``),
``glob`` (an unquoted ``*``, ``?`` or ``[``) and ``brace`` (an unquoted ``{a,b}`` or
``{1..3}``, which bash turns into several words). A word that looks like an assignment with
a ``~`` after its ``=`` or a ``:`` (``x=~/a``) ``expands`` too: bash puts the home directory
in, even in arguments.

Redirections are read as bash reads them, and wherever sh (dash) reads one differently the
line has a problem: a descriptor number of more than one digit (``12>x``: sh passes ``12``
to the command), anything but a single digit or ``-`` after ``<&``/``>&`` (bash writes
``>&FILE`` to a file, sh refuses the line), and text stuck to a closing ``-`` (bash reads
``2>&-x`` as ``2>&-`` and a word ``x``, so ``sort 2>&---co=sh`` runs ``sort --co=sh``).
bash-only operators (``<<<``, ``|&``) are problems too: sh refuses the line.

Here-document bodies are read in :mod:`.shell_heredocs`, ``$`` forms in :mod:`.shell_dollar`.
"""

from __future__ import annotations

import re

import attrs

from clawbot_tools.runtime.shell_dollar import dollar, short
from clawbot_tools.runtime.shell_heredocs import skip_bodies

CONTROL_OPS = ("||", "&&", "|&", ";;", ";&", "|", ";", "&", "\n", "(", ")")
REDIRECT_OPS = ("<<<", "&>>", "<<-", "<<", ">>", "<&", ">&", "<>", ">|", "&>", "<", ">")
GLOB_CHARS = "*?["
CONTINUATION_JOINS = "$|&;<>("  # a \<newline> after these may join an operator or a $-form
QUOTED_MARK = "\x00"  # stands for a quoted character in Word.mask
DIGITS = "0123456789"  # ASCII: str.isdigit accepts "²"
BAD_CHARS = re.compile("[\x00-\x08\x0b-\x1f\x7f\ud800-\udfff]")
ASSIGNMENT_LIKE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\[[^\]]*\])?\+?=")  # unquoted: see _assignment_tilde
NAMED_FD = re.compile(r"\{[A-Za-z_][A-Za-z0-9_]*\}")
BASH_ONLY_OPS = {"<<<": "a here-string", "|&": "a pipe of stdout and stderr"}
DUPLICATING_OPS = ("<&", ">&")  # their target is a descriptor number, or "-" (close)
STUCK = re.compile(r"[^ \t\n;|&<>()]*")  # what sticks to a word: all up to a blank or an operator


@attrs.frozen
class Word:
    """One shell word: ``value`` with quotes removed; ``raw`` as written."""

    value: str
    raw: str
    expands: bool = False  # holds a $VAR / ${VAR} expansion: its value is unknown here
    glob: bool = False  # holds an unquoted * ? [ : the shell may replace it with file names
    quoted: bool = False  # some part was quoted or escaped (so it is no assignment/keyword)
    tilde: bool = False  # starts with an unquoted ~
    brace: bool = False  # holds an unquoted {a,b} / {1..3}: bash may make several words of it
    placeholder: bool = False  # filled in later by a wrapper (find -exec's {}): unknown here
    start: int = attrs.field(default=-1, eq=False)  # where ``raw`` begins in the lexed text (-1: not lexed)

    @property
    def literal(self) -> bool:
        """The word stands for exactly ``value``: no expansion, glob, brace or placeholder."""
        return not (self.expands or self.glob or self.brace or self.placeholder)


@attrs.frozen
class Op:
    """A control operator (``|``, ``&&``, ``;``, ``(``, newline ...) or a redirection (``>``, ``2>&1``)."""

    text: str
    redirect: bool = False


Token = Word | Op


@attrs.frozen
class Lexed:
    tokens: tuple[Token, ...]
    problems: tuple[str, ...]


class _Builder:
    def __init__(self) -> None:
        self.value: list[str] = []
        self.mask: list[str] = []  # the value with every quoted character replaced by QUOTED_MARK
        self.raw_start = -1
        self.expands = self.glob = self.quoted = self.tilde = False
        self.started = False

    def add(self, text: str, *, quoted: bool) -> None:
        if not self.started and not quoted and text.startswith("~"):
            self.tilde = True
        self.started = True
        self.value.append(text)
        self.mask.append(QUOTED_MARK * len(text) if quoted else text)
        if quoted:
            self.quoted = True

    def word(self, source: str, end: int) -> Word:
        mask = "".join(self.mask)
        return Word(
            "".join(self.value),
            source[self.raw_start : end],
            self.expands or _assignment_tilde(mask),
            self.glob or _globs(mask),
            self.quoted,
            self.tilde,
            brace=_brace_expands(mask),
            start=self.raw_start,
        )


def _assignment_tilde(mask: str) -> bool:
    """Whether bash expands a ``~`` in the word as in an assignment: ``x=~/a``, ``x=a:~``.

    bash does so for every word that looks like an assignment, arguments too (``ls x=~``
    lists ``x=/home/me``); sh only for real assignments. Either way the value is not the text.
    """
    match = ASSIGNMENT_LIKE.match(mask)
    if match is None:
        return False
    value = mask[match.end() :]
    return value.startswith("~") or ":~" in value


def _globs(mask: str) -> bool:
    """Whether unquoted text holds a pattern: ``*``, ``?``, or ``[`` with a ``]`` after it."""
    if "*" in mask or "?" in mask:
        return True
    start = mask.find("[")
    return start >= 0 and "]" in mask[start + 1 :]


def _brace_expands(mask: str) -> bool:
    """Whether unquoted text may be a brace expansion: a ``{`` then ``,`` or ``..`` then ``}``.

    An over-approximation (``{x}a,b{}`` counts too): it only has to never miss one.
    """
    start = mask.find("{")
    end = mask.rfind("}")
    if start < 0 or end < start:
        return False
    inner = mask[start + 1 : end]
    return "," in inner or ".." in inner


def lex(source: str) -> Lexed:
    """Words and operators of ``source``; never raises. Linear in ``len(source)``."""
    tokens: list[Token] = []
    problems: list[str] = []
    word = _Builder()
    heredocs: list[int] = []  # indices of << operators whose bodies start after the next newline
    i, n = 0, len(source)
    bad = BAD_CHARS.search(source)
    if bad is not None:
        problems.append(
            f"the line holds the character {bad.group()!r}: control characters and text that is not valid Unicode (lone surrogates) are not analysed"
        )

    def flush(end: int) -> None:
        nonlocal word
        if word.started:
            made = word.word(source, end)
            if tokens and _duplicates(tokens[-1]):
                problem = _descriptor_target_problem(tokens[-1], made)
                if problem:
                    note(problem)
            tokens.append(made)
        word = _Builder()

    def note(problem: str) -> None:
        if problem not in problems:
            problems.append(problem)

    while i < n:
        c = source[i]
        if word.raw_start < 0 and c not in " \t":
            word.raw_start = i
        if c == "\\":
            if i + 1 < n and source[i + 1] == "\n":
                if i > 0 and source[i - 1] in CONTINUATION_JOINS:
                    note("a line continuation inside an operator or after $ (the shell joins what the lexer splits)")
                i += 2  # line continuation
                continue
            word.add(source[i + 1 : i + 2] or "\\", quoted=True)  # a \ that ends the line stands for itself
            i += 2
        elif c == "'":
            end = source.find("'", i + 1)
            if end < 0:
                note("an unclosed ' quote")
                word.add(source[i + 1 :], quoted=True)
                i = n
            else:
                word.add(source[i + 1 : end], quoted=True)
                i = end + 1
        elif c == '"':
            i = _double_quoted(source, i + 1, word, note)
        elif c == "`":
            note("command substitution with backticks")
            word.expands = True
            word.add("`", quoted=True)
            i += 1
        elif c == "$":
            i = dollar(source, i, word, note, quoted=False)
        elif c in " \t":
            flush(i)
            i += 1
        elif c == "#" and not word.started:
            end = source.find("\n", i)
            i = n if end < 0 else end
        elif c in "|&;\n<>()":
            if c in "<>" and word.started and not word.quoted and NAMED_FD.fullmatch("".join(word.value)):
                note("a {NAME}> redirection (bash puts a file descriptor number in NAME)")
            digits = "".join(word.value) if c in "<>" and word.started and not word.quoted else ""
            if _all_digits(digits) and tokens and _duplicates(tokens[-1]):
                # bash: 2>&1>x is 2>&1 then >x; sh reads a redirection where the descriptor should be
                note(f"a descriptor number directly before a redirection ({tokens[-1].text}{digits}{c}): bash and sh read it differently")
                prefix = ""
                flush(i)
            elif _all_digits(digits):
                if len(digits) > 1:
                    note(
                        f"the descriptor number {digits} before a redirection: sh takes a single digit "
                        f"(it passes {digits} to the command as a word), bash takes any number"
                    )
                prefix, word = digits, _Builder()  # an fd number: 2>file
            else:
                prefix = ""
                flush(i)
            op = next(o for o in (*REDIRECT_OPS, *CONTROL_OPS) if source.startswith(o, i))
            if op in ("<<", "<<-"):
                heredocs.append(len(tokens))
            if op in (";;", ";&"):
                note("a case statement")
            if op in BASH_ONLY_OPS:
                note(f"{op} ({BASH_ONLY_OPS[op]}) is bash syntax: sh refuses the line")
            if op in ("&>", "&>>"):
                note(f"{op} redirects in bash but means '&' then '{op[1:]}' in sh (which then runs the words after it)")
            if op in ("<", ">") and source.startswith("(", i + 1):
                note("process substitution (<(...) or >(...))")
            elif op == "(" and not (tokens and isinstance(tokens[-1], Op) and tokens[-1].redirect):
                note("a subshell, (( )) or function definition (parentheses)")  # "<(" was reported with its "<"
            tokens.append(Op(prefix + op, redirect=op in REDIRECT_OPS))
            i += len(op)
            if op in DUPLICATING_OPS:
                i = _closing_dash(source, i, tokens, note)
            if op == "\n" and heredocs:
                i = skip_bodies(source, i, [_heredoc(tokens, k) for k in heredocs], note)
                heredocs.clear()
        else:
            word.add(c, quoted=False)
            i += 1
    flush(n)
    return Lexed(tuple(tokens), tuple(problems))


def _all_digits(text: str) -> bool:
    return bool(text) and all(ch in DIGITS for ch in text)


def _duplicates(token: Token) -> bool:
    """Whether ``token`` is ``<&`` or ``>&`` (with or without a descriptor number before it)."""
    return isinstance(token, Op) and token.text.endswith(DUPLICATING_OPS)


def _closing_dash(source: str, i: int, tokens: list[Token], note) -> int:
    """After ``<&``/``>&``: a ``-`` is a word of its own; returns the index after it.

    bash reads a ``-`` there (blanks between allowed) as a token by itself, whatever
    follows: ``2>&-x`` closes stderr and passes ``x`` to the command, so ``sort 2>&---co=sh``
    is ``sort --co=sh``. sh reads ``-x`` as the target and refuses the line. Lexed the way
    bash reads it, and a problem when something sticks to the ``-``.
    """
    j, n = i, len(source)
    while j < n and (source[j] in " \t" or source.startswith("\\\n", j)):
        j += 1 if source[j] in " \t" else 2
    if not source.startswith("-", j):
        return i
    stuck = STUCK.match(source, j + 1).group()
    if stuck:
        note(
            f"{short('-' + stuck)!r} after {tokens[-1].text}: bash closes the descriptor and passes "
            f"what follows the - to the command as a word, sh refuses the line"
        )
    tokens.append(Word("-", "-", start=j))
    return j + 1


def _descriptor_target_problem(op: Op, target: Word) -> str | None:
    """What is wrong with the target of ``<&``/``>&``: only a single unquoted digit (or ``-``) is read alike.

    bash takes any number, and for ``>&WORD`` writes stdout and stderr to the file WORD;
    sh takes one digit and refuses anything else (a word with a ``$`` form it reads when
    the command runs).
    """
    if len(target.raw) == 1 and target.raw in DIGITS:
        return None
    return (
        f"the redirection {op.text}{short(target.raw)}: only a single digit or - after {op.text[-2:]} is read "
        "alike by sh and bash (bash takes a file name or any number there)"
    )


def _heredoc(tokens: list[Token], index: int) -> tuple[bool, Word | None]:
    """(strip leading tabs, the delimiter) of the here-document operator at ``tokens[index]``."""
    op = tokens[index]
    delimiter = tokens[index + 1] if index + 1 < len(tokens) else None
    return op.text.endswith("<<-"), delimiter if isinstance(delimiter, Word) else None


def _double_quoted(source: str, i: int, word: _Builder, note) -> int:
    n = len(source)
    word.add("", quoted=True)
    while i < n:
        c = source[i]
        if c == '"':
            return i + 1
        if c == "\\" and i + 1 < n and source[i + 1] in '$`"\\\n':
            if source[i + 1] != "\n":
                word.add(source[i + 1], quoted=True)
            elif source[i - 1] == "$":
                note("a line continuation inside an operator or after $ (the shell joins what the lexer splits)")
            i += 2
        elif c == "`":
            note("command substitution with backticks")
            word.expands = True
            i += 1
        elif c == "$":
            i = dollar(source, i, word, note, quoted=True)
        else:
            word.add(c, quoted=True)
            i += 1
    note('an unclosed " quote')
    return n
