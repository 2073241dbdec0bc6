"""Splitting a shell command line into words and operators, the way ``/bin/sh`` would.

``exec`` decides what may run by looking at every program a command line starts, so it
must read the line as the shell does: quotes, escapes and line continuations are undone
(``r\\m``, ``"rm"`` and ``'r'm`` are all the word ``rm``), and operators split commands.
What the lexer cannot resolve statically is not guessed at: command substitution
(``$(...)``, backticks), process substitution (``<(...)``), here-documents, parentheses
and unclosed quotes are reported in ``Lexed.problems``, and a word holding a ``$``
expansion or an unquoted glob is flagged, so the caller can refuse to call it "allowed".
"""

from __future__ import annotations

import attrs

CONTROL_OPS = ("||", "&&", "|&", ";;", ";&", "|", ";", "&", "\n")
REDIRECT_OPS = ("<<<", "&>>", "<<-", "<<", ">>", "<&", ">&", "<>", ">|", "&>", "<", ">")
NAME_START = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_"
NAME_CHARS = NAME_START + "0123456789"
SPECIAL_PARAMS = "@*#?$!-0123456789"
GLOB_CHARS = "*?["


@attrs.frozen
class Word:
    """One shell word: ``value`` with quotes removed; ``raw`` as written."""

    value: str
    raw: str
    expands: bool = False  # holds a $VAR / ${...} expansion: its value is unknown here
    glob: bool = False  # holds an unquoted * ? [ : the shell may replace it with file names
    quoted: bool = False  # some part was quoted or escaped (so it is no assignment/keyword)
    tilde: bool = False  # starts with an unquoted ~

    @property
    def literal(self) -> bool:
        return not self.expands and not self.glob


@attrs.frozen
class Op:
    """A control operator (``|``, ``&&``, ``;``, newline ...) or a redirection (``>``, ``2>&1``)."""

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
        self.raw_start = -1
        self.expands = self.glob = self.quoted = self.tilde = False
        self.started = False

    def add(self, text: str, *, quoted: bool) -> None:
        if not self.started and not quoted and text.startswith("~"):
            self.tilde = True
        self.started = True
        self.value.append(text)
        if quoted:
            self.quoted = True
        elif any(c in GLOB_CHARS for c in text):
            self.glob = True

    def word(self, source: str, end: int) -> Word:
        return Word("".join(self.value), source[self.raw_start:end], self.expands, self.glob, self.quoted, self.tilde)


def lex(source: str) -> Lexed:
    """Words and operators of ``source``; never raises."""
    tokens: list[Token] = []
    problems: list[str] = []
    word = _Builder()
    heredocs: list[int] = []  # indices of << operators whose bodies start after the next newline
    i, n = 0, len(source)

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
        elif c in "()":
            after_redirect = bool(tokens) and isinstance(tokens[-1], Op) and tokens[-1].redirect and not word.started
            if c == "(" and not after_redirect:  # "<(" was reported with its operator
                note("a subshell or function definition (parentheses)")
            flush(i)
            i += 1
        elif c in "|&;\n<>":
            if c in "<>" and word.started and not word.quoted and all(ch.isdigit() for ch in word.value):
                prefix, word = "".join(word.value), _Builder()  # an fd number: 2>file
            else:
                prefix = ""
                flush(i)
            op = next(o for o in (*REDIRECT_OPS, *CONTROL_OPS) if source.startswith(o, i))
            if op in ("<<", "<<-"):
                heredocs.append(len(tokens))
            if op in (";;", ";&"):
                note("a case statement")
            if op in ("<", ">") and source.startswith("(", i + 1):
                note("process substitution (<(...) or >(...))")
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


def _heredoc_bodies(source: str, i: int, pending: list[list[Token]], note) -> int:
    """Skip the here-document bodies that start at ``i``; returns the index after them.

    A body is data for the command's stdin, not commands; with an unquoted delimiter the
    shell still expands ``$(...)`` and backticks in it, which the analysis cannot see.
    """
    for pair in pending:
        op, delimiter = pair[0], pair[1] if len(pair) > 1 else None
        if not isinstance(delimiter, Word) or delimiter.expands:
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
        body = source[body_start:i]
        if not delimiter.quoted and ("$(" in body or "`" in body):
            note("command substitution in a here-document")
    return i


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
        note("command substitution $(...)")
        word.expands = True
        word.add("$(", quoted=True)
        return i + 2
    if nxt == "{":
        depth, j = 0, i + 1
        while j < n:
            if source[j] == "{":
                depth += 1
            elif source[j] == "}":
                depth -= 1
                if depth == 0:
                    break
            j += 1
        inner = source[i + 2:j]
        if "$(" in inner or "`" in inner:
            note("command substitution $(...)")
        word.expands = True
        word.add(source[i:j + 1], quoted=True)
        return j + 1
    if nxt and (nxt in NAME_START or nxt in SPECIAL_PARAMS):
        j = i + 2
        if nxt in NAME_START:
            while j < n and source[j] in NAME_CHARS:
                j += 1
        word.expands = True
        word.add(source[i:j], quoted=True)
        return j
    if nxt == "'" and not quoted:  # $'...' (ANSI-C quoting in bash): treat its value as unknown
        word.expands = True
        end = source.find("'", i + 2)
        end = n if end < 0 else end + 1
        word.add(source[i:end], quoted=True)
        return end
    word.add("$", quoted=quoted)
    return i + 1
