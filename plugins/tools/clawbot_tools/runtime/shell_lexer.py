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
``{1..3}``, which bash turns into several words).
"""

from __future__ import annotations

import re

import attrs

CONTROL_OPS = ("||", "&&", "|&", ";;", ";&", "|", ";", "&", "\n", "(", ")")
REDIRECT_OPS = ("<<<", "&>>", "<<-", "<<", ">>", "<&", ">&", "<>", ">|", "&>", "<", ">")
NAME_START = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_"
NAME_CHARS = NAME_START + "0123456789"
SPECIAL_PARAMS = "@*#?$!-0123456789"
GLOB_CHARS = "*?["
CONTINUATION_JOINS = "$|&;<>("  # a \<newline> after these may join an operator or a $-form
QUOTED_MARK = "\x00"  # stands for a quoted character in Word.mask
DIGITS = "0123456789"  # ASCII: str.isdigit accepts "²"
WORD_END = " \t\n;|&<>"  # a $ before these (or at the end) is a plain "$" in every shell
BAD_CHARS = re.compile("[\x00-\x08\x0b-\x1f\x7f\ud800-\udfff]")
NAMED_FD = re.compile(r"\{[A-Za-z_][A-Za-z0-9_]*\}")
SIMPLE_BRACED = re.compile(r"\$\{(?:[A-Za-z_][A-Za-z0-9_]*|[0-9]+|[@*#?$!-])\}")


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
            "".join(self.value), source[self.raw_start:end], self.expands, self.glob or _globs(mask), self.quoted,
            self.tilde, brace=_brace_expands(mask),
        )


def _globs(mask: str) -> bool:
    """Whether unquoted text holds a pattern: ``*``, ``?``, or ``[`` with a ``]`` after it."""
    if "*" in mask or "?" in mask:
        return True
    start = mask.find("[")
    return start >= 0 and "]" in mask[start + 1:]


def _brace_expands(mask: str) -> bool:
    """Whether unquoted text may be a brace expansion: a ``{`` then ``,`` or ``..`` then ``}``.

    An over-approximation (``{x}a,b{}`` counts too): it only has to never miss one.
    """
    start = mask.find("{")
    end = mask.rfind("}")
    if start < 0 or end < start:
        return False
    inner = mask[start + 1:end]
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
            f"the line holds the character {bad.group()!r}: control characters and text that is not valid "
            "Unicode (lone surrogates) are not analysed"
        )

    def flush(end: int) -> None:
        nonlocal word
        if word.started:
            tokens.append(word.word(source, end))
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
            word.add(source[i + 1:i + 2], quoted=True)
            i += 2
        elif c == "'":
            end = source.find("'", i + 1)
            if end < 0:
                note("an unclosed ' quote")
                word.add(source[i + 1:], quoted=True)
                i = n
            else:
                word.add(source[i + 1:end], quoted=True)
                i = end + 1
        elif c == '"':
            i = _double_quoted(source, i + 1, word, note)
        elif c == "`":
            note("command substitution with backticks")
            word.expands = True
            word.add("`", quoted=True)
            i += 1
        elif c == "$":
            i = _dollar(source, i, word, note, quoted=False)
        elif c in " \t":
            flush(i)
            i += 1
        elif c == "#" and not word.started:
            end = source.find("\n", i)
            i = n if end < 0 else end
        elif c in "|&;\n<>()":
            if c in "<>" and word.started and not word.quoted and NAMED_FD.fullmatch("".join(word.value)):
                note("a {NAME}> redirection (bash puts a file descriptor number in NAME)")
            if c in "<>" and word.started and not word.quoted and _all_digits("".join(word.value)):
                prefix, word = "".join(word.value), _Builder()  # an fd number: 2>file
            else:
                prefix = ""
                flush(i)
            op = next(o for o in (*REDIRECT_OPS, *CONTROL_OPS) if source.startswith(o, i))
            if op in ("<<", "<<-"):
                heredocs.append(len(tokens))
            if op in (";;", ";&"):
                note("a case statement")
            if op in ("&>", "&>>"):
                note(f"{op} redirects in bash but means '&' then '{op[1:]}' in sh (which then runs the words after it)")
            if op in ("<", ">") and source.startswith("(", i + 1):
                note("process substitution (<(...) or >(...))")
            elif op == "(" and not (tokens and isinstance(tokens[-1], Op) and tokens[-1].redirect):
                note("a subshell, (( )) or function definition (parentheses)")  # "<(" was reported with its "<"
            tokens.append(Op(prefix + op, redirect=op in REDIRECT_OPS))
            i += len(op)
            if op == "\n" and heredocs:
                i = _heredoc_bodies(source, i, [tokens[k:k + 2] for k in heredocs], note)
                heredocs.clear()
        else:
            word.add(c, quoted=False)
            i += 1
    flush(n)
    return Lexed(tuple(tokens), tuple(problems))


def _all_digits(text: str) -> bool:
    return bool(text) and all(ch in DIGITS for ch in text)


def _heredoc_bodies(source: str, i: int, pending: list[list[Token]], note) -> int:
    """Skip the here-document bodies that start at ``i``; returns the index after them.

    A body is data for the command's stdin, not commands; with an unquoted delimiter the
    shell still expands ``$`` forms and backticks in it. Plain ``$NAME`` / ``${NAME}`` only
    insert a value; anything else (``$(...)``, backticks, ``$((...))``, ``$[...]``,
    ``${x[...]}``, ``${x:-...}``) may run code, which the analysis cannot see.
    """
    for pair in pending:
        op, delimiter = pair[0], pair[1] if len(pair) > 1 else None
        if not isinstance(delimiter, Word) or not delimiter.literal:
            note("a here-document whose delimiter is not a fixed word")
            return len(source)
        strip_tabs = isinstance(op, Op) and op.text.endswith("<<-")
        body_start = i
        while i < len(source):
            end = source.find("\n", i)
            line = source[i:] if end < 0 else source[i:end]
            i = len(source) if end < 0 else end + 1
            if (line.lstrip("\t") if strip_tabs else line) == delimiter.value:
                break
        if not delimiter.quoted:
            body = source[body_start:i]
            if "\\\n" in body:  # bash joins such lines before it looks for the delimiter
                note("a line continuation in a here-document (bash may end it elsewhere)")
            problem = _body_problem(body)
            if problem:
                note(f"{problem} in a here-document")
    return i


def _body_problem(body: str) -> str | None:
    """What in an unquoted here-document body the shell would evaluate beyond plain ``$NAME``."""
    i, n = 0, len(body)
    while i < n:
        c = body[i]
        if c == "\\":
            i += 2
            continue
        if c == "`":
            return "command substitution"
        if c == "$":
            nxt = body[i + 1:i + 2]
            if nxt == "(":
                return "command substitution" if body[i + 2:i + 3] != "(" else "arithmetic expansion"
            if nxt == "[":
                return "arithmetic expansion"
            if nxt == "{":
                match = SIMPLE_BRACED.match(body, i)
                if match is None:
                    return "a ${...} expansion with operators"
                i = match.end()
                continue
        i += 1
    return None


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
            i = _dollar(source, i, word, note, quoted=True)
        else:
            word.add(c, quoted=True)
            i += 1
    note('an unclosed " quote')
    return n


def _dollar(source: str, i: int, word: _Builder, note, *, quoted: bool) -> int:
    """Consume a ``$`` form starting at ``i``; returns the index after it."""
    n = len(source)
    nxt = source[i + 1:i + 2]
    if nxt == "(":
        if source.startswith("((", i + 1):
            note("arithmetic expansion $((...))")
        else:
            note("command substitution $(...)")
        word.expands = True
        word.add("$(", quoted=True)
        return i + 2
    if nxt == "[":
        note("arithmetic expansion $[...]")
        word.expands = True
        word.add("$[", quoted=True)
        return i + 2
    if nxt == "{":
        word.expands = True
        match = SIMPLE_BRACED.match(source, i)
        if match is not None:
            word.add(match.group(), quoted=True)
            return match.end()
        end = _braced_end(source, i + 2)
        text = source[i:end]
        note(f"a ${{...}} expansion other than a plain ${{NAME}} ({_short(text)})")
        word.add(text, quoted=True)
        return end
    if nxt and (nxt in NAME_START or nxt in SPECIAL_PARAMS):
        j = i + 2
        if nxt in NAME_START:
            while j < n and source[j] in NAME_CHARS:
                j += 1
        word.expands = True
        word.add(source[i:j], quoted=True)
        return j
    if nxt == "'" and not quoted:
        # $'...': ANSI-C quoting in bash (\' does not end it), "$" then '...' in sh: they
        # disagree on where it ends, so what follows cannot be trusted
        note("ANSI-C quoting $'...' (bash and sh disagree on where it ends)")
        word.expands = True
        j = i + 2
        while j < n and source[j] != "'":
            j += 2 if source[j] == "\\" else 1
        end = min(n, j + 1)
        word.add(source[i:end], quoted=True)
        return end
    if not (nxt == "" or nxt in WORD_END or (quoted and nxt in "\"'")):
        # $"..." is a translated string in bash (looked up in a message catalogue); $%, $/ ...
        # are plain text, but nothing here depends on telling them apart
        note(f"a $ followed by {nxt!r} (bash reads $\"...\" as a translated string; only $NAME, ${{NAME}} and $? ... are analysed)")
        word.expands = True
    word.add("$", quoted=quoted)
    return i + 1


def _braced_end(source: str, i: int) -> int:
    """Where a ``${`` whose contents start at ``i`` ends, as ``sh``/``bash`` see it.

    A plain ``{`` does not nest (``${x-{}`` ends at the first ``}``); ``${`` and ``$(``
    inside do, and quotes hide what they enclose. This only decides where lexing goes on:
    such an expansion is already a problem, so a wrong guess can only make the line ask.
    """
    n = len(source)
    depth = 1
    while i < n:
        c = source[i]
        if c == "\\":
            i += 2
            continue
        if c == "'":
            end = source.find("'", i + 1)
            i = n if end < 0 else end + 1
            continue
        if c == '"':
            end = i + 1
            while end < n and source[end] != '"':
                end += 2 if source[end] == "\\" else 1
            i = end + 1
            continue
        if c == "$" and source.startswith("{", i + 1):
            depth += 1
            i += 2
            continue
        if c == "}":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return n


def _short(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."
