"""The data types (and one small helper) the ``shell_*`` analysis modules share (see :mod:`.shell_analysis`)."""

from __future__ import annotations

import re
from collections.abc import Callable

import attrs

from clawbot_tools.runtime.shell_lexer import Word

ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


def expand_tilde(name: str, home: str | None) -> str | None:
    """``~`` or ``~/...`` with ``home`` put in; ``None`` for ``~user`` or without a home."""
    if name == "~" or name.startswith("~/"):
        return None if home is None else home + name[1:]
    return None


def leading_options(args: list[Word]) -> tuple[list[str], list[Word]]:
    """The options before a builtin's operands, and the operands (after ``--``, which is dropped)."""
    options: list[str] = []
    while args and args[0].value.startswith("-") and args[0].value != "-":
        flag = args[0].value
        args = args[1:]
        if flag == "--":
            break
        options.append(flag)
    return options, args


@attrs.frozen
class Command:
    """One program the line starts: ``argv[0]`` names it; ``via`` lists the wrappers around it."""

    argv: tuple[Word, ...]
    cwd: str | None  # where a relative program path resolves; None: unknown (after cd $X)
    via: tuple[str, ...] = ()
    builtin: bool = False
    default_path: bool = False  # looked up on the default PATH (env -i, command -p)

    @property
    def name(self) -> str:
        return self.argv[0].value


@attrs.frozen
class Redirect:
    op: str
    target: Word | None
    cwd: str | None  # where a relative target resolves; None: unknown


@attrs.frozen
class Analysis:
    commands: tuple[Command, ...]
    redirects: tuple[Redirect, ...]
    problems: tuple[str, ...]  # reasons the line is not provably allowed
    privileged: tuple[str, ...]  # sudo, doas ... found
    wrappers: tuple[Command, ...]  # programs looked through (sh -c, env, nice, xargs ...)
    assigned: tuple[str, ...]  # variable names set for commands (VAR=x cmd, env VAR=x, export VAR=)
    assignments: tuple[tuple[str, str | None], ...] = ()  # (name, value; None: not a fixed word)
    # what looks files up by name (globs, test -e NAME): (what, the name or None for a glob)
    reveals: tuple[tuple[str, str | None], ...] = ()
    # every simple command as written (assignments and keywords included), with the directory
    # its relative words name files in (None: unknown, after cd): what a file binding reads
    segments: tuple[tuple[tuple[Word, ...], str | None], ...] = ()
    # problems that left text not taken apart into words ($(...), unclosed quotes, nesting)
    unread: tuple[str, ...] = ()


class Collector:
    """What the walk has found so far; :func:`.shell_analysis.analyse` turns it into an :class:`Analysis`."""

    def __init__(self) -> None:
        self.commands: list[Command] = []
        self.redirects: list[Redirect] = []
        self.problems: list[str] = []
        self.privileged: list[str] = []
        self.wrappers: list[Command] = []
        self.assigned: list[str] = []
        self.assignments: list[tuple[str, str | None]] = []
        self.keywords: list[str] = []
        self.reveals: list[tuple[str, str | None]] = []
        self.segments: list[tuple[tuple[Word, ...], str | None]] = []
        self.unread: list[str] = []

    def assign(self, word: Word, text: str | None = None) -> None:
        name, _, value = (word.value if text is None else text).partition("=")
        self.assigned.append(name)
        self.assignments.append((name, value if word.literal else None))

    def reveal(self, text: str, name: str | None = None) -> None:
        if (text, name) not in self.reveals:
            self.reveals.append((text, name))

    def problem(self, text: str) -> None:
        if text not in self.problems:
            self.problems.append(text)

    def unreadable(self, text: str) -> None:
        """A problem that leaves part of the line unseen (no word of it reaches the analysis)."""
        self.problem(text)
        if text not in self.unread:
            self.unread.append(text)


@attrs.frozen
class Walk:
    """The walk's own steps, handed to the wrappers so they can go on with what they start
    (passed in rather than imported: the walk calls the wrappers).
    """

    script: Callable[..., None]  # (source, state, home, out, *, depth, via)
    command: Callable[..., None]  # (argv, state, home, out, *, depth, via, default_path, wrapped, builtins)
