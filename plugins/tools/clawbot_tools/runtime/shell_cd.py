"""Following ``cd`` the way the shell does (see :mod:`.shell_analysis` for the rules).

``state`` is a dict: ``cwd`` (the real directory, None: unknown), ``pwd`` (the shell's
logical one), ``cd_mode`` and ``reset_at_end`` (set by :class:`AndOrList`).
"""

from __future__ import annotations

import os

from clawbot_tools.runtime.executables import real_path
from clawbot_tools.runtime.shell_lexer import Word
from clawbot_tools.runtime.shell_types import leading_options


class AndOrList:
    """Follows ``cd`` through the and-or lists (``a && b || c``) of one script, one command at a time."""

    def __init__(self, state: dict) -> None:
        self.state = state
        # the current list's && / || so far, where it started, and whether a cd in it that
        # may be skipped makes the directory unknown once it ends
        self.ops: list[str] = []
        self.start = (state["cwd"], state["pwd"])
        state["reset_at_end"] = False

    def before(self, next_op: str | None) -> None:
        """Before a command followed by ``next_op``: how a ``cd`` in it is followed."""
        state = self.state
        if next_op == "||" or "||" in self.ops:
            state["cd_mode"] = "unknown"  # a cd that may be skipped, or whose failure runs what follows
        elif self.ops:
            state["cd_mode"] = "and"  # runs only if what precedes succeeded: known for the && after it
        else:
            state["cd_mode"] = "first"

    def after(self, next_op: str | None) -> None:
        """After it: where the next command runs."""
        state = self.state
        state["cd_mode"] = "first"
        if next_op in ("|", "|&"):
            pass
        elif next_op in ("&&", "||"):
            self.ops.append(next_op)
            if next_op == "||" and state["reset_at_end"]:
                state["cwd"] = state["pwd"] = None  # after ||: with or without that cd
        else:  # the list ends
            if next_op == "&":  # the whole list ran in the background: its cds stay there
                state["cwd"], state["pwd"] = self.start
            elif state["reset_at_end"]:
                state["cwd"] = state["pwd"] = None
            self.ops.clear()
            state["reset_at_end"] = False
            self.start = (state["cwd"], state["pwd"])


def expand_tilde(name: str, home: str | None) -> str | None:
    if name == "~" or name.startswith("~/"):
        return None if home is None else home + name[1:]
    return None


def follow_cd(args: list[Word], state: dict, home: str | None, *, detached: bool) -> None:
    physical = False
    flags, args = leading_options(args)
    for flag in flags:
        if flag in ("-P", "-L"):
            physical = flag == "-P"  # the last one wins, in dash and bash alike
        else:
            state["cwd"] = state["pwd"] = None  # cd -e, -@, -LP ...: not followed
            return
    mode = state.get("cd_mode", "first")
    if detached or mode == "unknown" or state["cwd"] is None or len(args) > 1:
        state["cwd"] = state["pwd"] = None
        return
    if not args:
        target = home
    elif args[0].value == "-":
        target = None
    elif args[0].tilde:
        target = expand_tilde(args[0].value, home)
    else:
        target = args[0].value
    if not target:
        state["cwd"] = state["pwd"] = None
        return
    if physical:
        logical = real_path(os.path.join(state["cwd"], target))
    else:  # the shell's default: ".." removes the last component of $PWD, not of the real path
        joined = os.path.join(state["pwd"] or state["cwd"], target)
        # bash refuses `cd missing/..` (and `cd file/..`) while dash goes on: either way
        # a component before ".." that is not a directory leaves the outcome unknown
        logical = os.path.normpath(joined) if _dirs_before_dotdot(joined) else None
    real = real_path(logical) if logical is not None else None
    if real is None or not (os.path.isdir(real) and os.access(real, os.X_OK)):
        # the cd may fail (or the directory may appear later): then what follows runs elsewhere
        state["cwd"] = state["pwd"] = None
        return
    state["cwd"], state["pwd"] = real, logical
    if mode == "and":  # it may not have run: after its and-or list, the directory is unknown
        state["reset_at_end"] = True


def _dirs_before_dotdot(path: str) -> bool:
    """Whether every path that a ``..`` in ``path`` climbs out of is an existing directory."""
    parts = path.split("/")
    for i, part in enumerate(parts):
        if part == ".." and i > 0:
            before = "/".join(parts[:i]) or "/"
            real = real_path(before)
            if real is None or not os.path.isdir(real):
                return False
    return True
