"""The gate of ``exec``: run now, ask the user, or refuse.

* ``deny``: refuse everything.
* ``full``: run everything, except destructive patterns and sudo-like commands, which ask.
* ``allowlist``: run only when *every* program the line starts (see
  :mod:`~clawbot_tools.runtime.shell_analysis`) resolves to an allowed executable: an
  ``allowlist`` entry, a ``safe_bins`` utility, an executable the user allowed always, or
  a harmless shell builtin; output redirections must stay inside the workspace. Anything
  else, including whatever the analysis cannot pin down, asks. Destructive patterns and
  sudo-like commands ask even when allowlisted.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Literal

import attrs

from clawbot_tools.runtime.config import ExecSettings
from clawbot_tools.runtime.destructive import destructive
from clawbot_tools.runtime.envscrub import is_dangerous
from clawbot_tools.runtime.executables import (
    Entry,
    Program,
    compile_entries,
    inside,
    resolve,
    trusted_path,
)
from clawbot_tools.runtime.shell_analysis import Analysis, Command, Redirect, analyse

SAFE_TARGETS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty"})


@attrs.frozen
class Verdict:
    action: Literal["run", "ask", "refuse"]
    reasons: tuple[str, ...] = ()
    allow_always: bool = False  # the only problem is programs "always" could remember
    programs: tuple[Program, ...] = ()  # programs not yet allowed (what "always" stores)
    destructive: bool = False


@attrs.frozen
class PolicyInput:
    settings: ExecSettings
    cwd: str
    workspace: str
    path_value: str
    home: str | None
    remembered: tuple[Program, ...] = ()


def decide(command: str, given: PolicyInput) -> Verdict:
    settings = given.settings
    if settings.security == "deny":
        return Verdict("refuse", ("exec is disabled ([plugins.tools.exec] security = \"deny\")",))
    analysis = analyse(command, given.cwd, given.home)
    hits = [f"destructive pattern: {label}" for label in destructive(command, analysis)]
    privileged = [f"runs with elevated privileges ({name})" for name in dict.fromkeys(analysis.privileged)]
    hard = hits + privileged
    if settings.security == "full":
        if hard:
            return Verdict("ask", tuple(hard), destructive=bool(hits))
        return Verdict("run")
    soft, programs = _allowlist_reasons(analysis, given)
    unremembered = [r for r in soft if not r.endswith(" is not in the exec allowlist")]
    reasons = hard + soft
    if not reasons:
        return Verdict("run")
    always = not hard and not unremembered and all(not inside(given.workspace, p.real) for p in programs)
    return Verdict("ask", tuple(reasons), allow_always=always, programs=tuple(programs), destructive=bool(hits))


def _allowlist_reasons(analysis: Analysis, given: PolicyInput) -> tuple[list[str], list[Program]]:
    reasons = [f"cannot be checked: {problem}" for problem in analysis.problems]
    for name in dict.fromkeys(analysis.assigned):
        if is_dangerous(name):
            reasons.append(f"sets {name}, which changes what the commands run")
    compile_ = _compiler(given)
    allowed = compile_(given.settings.allowlist) + [Entry(p.real, real=p.real, name=p.name) for p in given.remembered]
    safe = compile_(given.settings.safe_bins)
    programs: list[Program] = []
    for command in analysis.commands:
        if command.builtin:
            continue
        reason, program = _program_reason(command, given, allowed, safe)
        if reason and reason not in reasons:
            reasons.append(reason)
        if program is not None and program not in programs:
            programs.append(program)
    for wrapper in analysis.wrappers:
        reason = _wrapper_reason(wrapper, given)
        if reason and reason not in reasons:
            reasons.append(reason)
    for redirect in analysis.redirects:
        reason = _redirect_reason(redirect, given)
        if reason and reason not in reasons:
            reasons.append(reason)
    return reasons, programs


def _compiler(given: PolicyInput):
    def compile_(texts: Iterable[str]) -> list[Entry]:
        return compile_entries(texts, path_value=given.path_value, workspace=given.workspace, home=given.home)

    return compile_


def _program_reason(command: Command, given: PolicyInput, allowed: list[Entry], safe: list[Entry]) -> tuple[str | None, Program | None]:
    """(why ``command`` is not allowed or None, the program to remember if "always")."""
    path_value = os.defpath if command.default_path else given.path_value
    try:
        program = resolve(command.name, path_value, command.cwd)
    except LookupError:
        return f"cannot tell which program {command.name!r} is (its directory is not known after cd)", None
    if program is None:
        return f"{command.name!r} was not found as an executable (it may be created by an earlier command)", None
    if any(entry.matches(program) for entry in allowed):
        return None, None
    if any(entry.matches(program) for entry in safe):
        writes = _safe_bin_writes(program.name, [w.value for w in command.argv[1:]])
        if writes is None:
            return None, None
        return f"{program.real} {writes}", None
    return f"{program.real} is not in the exec allowlist", program


def _wrapper_reason(command: Command, given: PolicyInput) -> str | None:
    """Why a wrapper (``nice``, ``sh -c`` ...) may not be the program it looks like.

    The analysis looked through it to the program it starts, which only holds if it is
    the system's wrapper: the file its name finds on the trusted PATH, not a ``./nice`` or
    a workspace directory early on PATH.
    """
    base = os.path.basename(command.name)
    path_value = os.defpath if command.default_path else given.path_value
    try:
        program = resolve(command.name, path_value, command.cwd)
    except LookupError:
        return f"cannot tell which program {command.name!r} is (its directory is not known after cd)"
    trusted = resolve(base, trusted_path(given.path_value, given.workspace) or os.defpath, None)
    if program is None:
        return f"{command.name!r} was not found as an executable"
    if trusted is None or program.real != trusted.real or program.name != base or inside(given.workspace, program.real):
        return f"{command.name!r} resolves to {program.real}, not the system's {base}"
    return None


def _safe_bin_writes(name: str, args: list[str]) -> str | None:
    """Why a safe bin's arguments make it more than a reader (``sort -o``, ``date -s`` ...)."""
    if name == "sort" and any(a.startswith("--compress") for a in args):
        return "runs a program (sort --compress-program)"
    if name == "sort" and any(a.startswith("--output") or (a.startswith("-") and not a.startswith("--") and "o" in a) for a in args):
        return "writes a file (sort -o)"
    if name == "uniq" and len([a for a in args if not a.startswith("-")]) > 1:
        return "writes a file (uniq INPUT OUTPUT)"
    if name == "date" and any(a in ("-s", "--set") or a.startswith(("--set=", "-s")) for a in args):
        return "sets the clock (date -s)"
    return None


def _redirect_reason(redirect: Redirect, given: PolicyInput) -> str | None:
    op = redirect.op.lstrip("0123456789")
    target = redirect.target
    if target is None or op in ("<", "<<<", "<<", "<<-"):
        return None
    if op in (">&", "<&") and target.literal and (target.value.isdigit() or target.value == "-"):
        return None  # 2>&1, >&-
    if op == "<&":
        return None
    if not target.literal:
        return f"cannot be checked: the redirection target {target.raw!r} is not a fixed word"
    path = target.value
    if target.tilde:
        if not given.home or not (path == "~" or path.startswith("~/")):
            return f"cannot be checked: the redirection target {target.raw!r} uses ~"
        path = given.home + path[1:]
    if path in SAFE_TARGETS or path.startswith("/dev/fd/"):
        return None
    if redirect.cwd is None and not os.path.isabs(path):
        return f"cannot be checked: where {target.raw!r} is written (the directory is not known after cd)"
    real = os.path.realpath(os.path.join(redirect.cwd or "/", path))
    if inside(given.workspace, real):
        return None
    return f"writes to {target.value} outside the workspace"
