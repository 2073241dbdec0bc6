"""The ``$`` forms, for the lexer (:mod:`.shell_lexer`): which it can take apart, and where each ends.

A simple ``$NAME``, ``${NAME}``, ``$1`` or ``$?`` only inserts a value (the word is marked
``expands``); everything else (``$(...)``, ``$((...))``, ``$[...]``, ``${x-...}``, ``$'...'``,
``$"..."``) is reported as a problem through ``note``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Protocol

NAME_START = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_"
NAME_CHARS = NAME_START + "0123456789"
SPECIAL_PARAMS = "@*#?$!-0123456789"
WORD_END = " \t\n;|&<>"  # a $ before these (or at the end) is a plain "$" in every shell
SIMPLE_BRACED = re.compile(r"\$\{(?:[A-Za-z_][A-Za-z0-9_]*|[0-9]+|[@*#?$!-])\}")


class WordSoFar(Protocol):
    """The word being built (the lexer's builder)."""

    expands: bool

    def add(self, text: str, *, quoted: bool) -> None: ...


def dollar(source: str, i: int, word: WordSoFar, note: Callable[[str], None], *, quoted: bool) -> int:
    """Consume a ``$`` form starting at ``i``; returns the index after it."""
    n = len(source)
    nxt = source[i + 1 : i + 2]
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
        end = braced_end(source, i + 2)
        text = source[i:end]
        note(f"a ${{...}} expansion other than a plain ${{NAME}} ({short(text)})")
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
        note(f'a $ followed by {nxt!r} (bash reads $"..." as a translated string; only $NAME, ${{NAME}} and $? ... are analysed)')
        word.expands = True
    word.add("$", quoted=quoted)
    return i + 1


def braced_end(source: str, i: int) -> int:
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


def short(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."
