"""Here-document bodies, for the lexer (:mod:`.shell_lexer`): where they end, and whether
the shell would run anything while it reads them.

A body is data for the command's stdin, not commands; with an unquoted delimiter the shell
still expands ``$`` forms and backticks in it. Plain ``$NAME`` / ``${NAME}`` only insert a
value; anything else (``$(...)``, backticks, ``$((...))``, ``$[...]``, ``${x[...]}``,
``${x:-...}``) may run code, which the analysis cannot see.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from clawbot_tools.runtime.shell_dollar import SIMPLE_BRACED

if TYPE_CHECKING:
    from clawbot_tools.runtime.shell_lexer import Word


def skip_bodies(source: str, i: int, pending: list[tuple[bool, Word | None]], note: Callable[[str], None]) -> int:
    """Skip the bodies that start at ``i``; returns the index after them.

    ``pending``: one (strip leading tabs, ie ``<<-``; the delimiter word or None) per
    here-document operator of the line just ended, in order.
    """
    for strip_tabs, delimiter in pending:
        if delimiter is None or not delimiter.literal:
            note("a here-document whose delimiter is not a fixed word")
            return len(source)
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
            problem = body_problem(body)
            if problem:
                note(f"{problem} in a here-document")
    return i


def body_problem(body: str) -> str | None:
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
            nxt = body[i + 1 : i + 2]
            if nxt == "(":
                return "command substitution" if body[i + 2 : i + 3] != "(" else "arithmetic expansion"
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
