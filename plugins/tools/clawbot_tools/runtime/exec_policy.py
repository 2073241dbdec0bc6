"""The gate of ``exec``: run now, ask the user, or refuse.

* ``deny``: refuse everything.
* ``full``: run everything, except destructive patterns and sudo-like commands, which ask.
* ``allowlist``: fail-closed. A line runs unasked only when the analysis (see
  :mod:`~clawbot_tools.runtime.shell_analysis`) found nothing it could not pin down, and
  *every* program it starts resolves to an allowed executable: an ``allowlist`` entry, an
  executable the user allowed always, a harmless shell builtin, or a ``safe_bins`` utility
  whose arguments pass :mod:`~clawbot_tools.runtime.safe_bins` (known read-only options,
  fixed words, files inside the workspace). Output redirections must name exactly
  ``/dev/null``, ``/dev/stdout``, ``/dev/stderr``, ``/dev/tty`` (or ``/dev/fd/1``/``2``)
  or resolve (symlinks followed) inside the workspace; input redirections must resolve
  inside the workspace. Paths are resolved by
  :func:`~clawbot_tools.runtime.executables.real_path`: never through ``/proc`` (there
  ``/proc/self/cwd`` is clawbot's, not the shell's), which asks. A variable may be set for
  commands (``NAME=value cmd``, ``NAME=value``, ``env NAME=value``, ``export NAME=value``)
  only if NAME is in :data:`HARMLESS_ASSIGNMENTS` (``POSIXLY_CORRECT`` changes how options
  are parsed, ``TZ`` names a file). Each decision resolves at most
  :data:`~clawbot_tools.runtime.executables.MAX_PATHS` paths and reads at most
  :data:`~clawbot_tools.runtime.executables.MAX_ENTRIES` directory entries; more asks.
  Anything else asks, never refuses. Destructive patterns and sudo-like commands ask even
  when allowlisted.

In every mode, a line holding lone surrogates (text that is not valid Unicode) asks, and
so does any error inside the analysis: :func:`decide` never raises.

In every mode but ``deny``, a line longer than :data:`MAX_ANALYSED_CHARS` asks without
being analysed. "Allow always" is offered only when the sole obstacle is programs that
could be remembered, none of them inside the workspace and none that runs whatever its
arguments say (shells, interpreters, ``env``, ``xargs``, ``find``, ``git``, ``make``,
``awk``, ``sed``, ``ssh``, ``curl`` ... see :data:`NEVER_ALWAYS`): those are allowed once,
and such a program found among the remembered ones (stored by an older version) is ignored.
"""

from __future__ import annotations

import fnmatch
import logging
import os
import re
from collections.abc import Iterable
from typing import Literal

import attrs

from clawbot_tools.runtime import safe_bins
from clawbot_tools.runtime.config import ExecSettings
from clawbot_tools.runtime.destructive import destructive
from clawbot_tools.runtime.envscrub import is_dangerous
from clawbot_tools.runtime.executables import (
    Budget,
    Entry,
    OverBudget,
    Program,
    Unplaceable,
    compile_entries,
    inside,
    place,
    real_path,
    reset_budget,
    resolve,
    trusted_path,
    use_budget,
)
from clawbot_tools.runtime.shell_analysis import Analysis, Command, Redirect, analyse

log = logging.getLogger(__name__)

MAX_ANALYSED_CHARS = 8000
# Exact texts (not resolved: "/dev/fd/../x" is none of them) a redirection may name.
OUTPUT_DEVICES = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/fd/1", "/dev/fd/2"})
# not /dev/zero or /dev/urandom: endless input, and sort would spill it to temporary files without end
INPUT_DEVICES = frozenset({"/dev/null", "/dev/stdin", "/dev/fd/0"})
# Programs never remembered by "allow always" (by the name they run under or their real
# file's name): they run whatever their arguments, input or working tree say.
NEVER_ALWAYS = (
    # shells and interpreters
    "sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "csh", "tcsh", "busybox", "toybox",
    "python*", "pypy*", "perl*", "ruby*", "irb", "node", "node[0-9]*", "nodejs", "deno", "bun", "bunx", "php*",
    "lua*", "luajit", "tclsh*", "wish*", "expect", "osascript", "Rscript", "R", "julia", "java", "jshell",
    "groovy*", "scala", "pwsh", "powershell", "gdb", "lldb", "ld.so", "ld-linux*", "vi", "vim", "nvim", "emacs", "ed", "ex",
    # programs that start other programs
    "env", "xargs", "find", "nohup", "timeout", "nice", "ionice", "stdbuf", "time", "command", "exec", "chroot",
    "setsid", "unshare", "nsenter", "flock", "watch", "strace", "ltrace", "script", "parallel", "screen", "tmux",
    "systemd-run", "at", "crontab", "bwrap",
    # programs whose options or configuration run commands, or that reach other machines
    "git", "make", "gmake", "cmake", "ninja", "awk", "gawk", "mawk", "nawk", "sed", "gsed", "tar", "zip",
    "ssh", "scp", "sftp", "rsync", "curl", "wget",
    "sudo", "doas", "su", "pkexec", "run0",
    # build tools and package managers run the workspace's own scripts
    "npm", "npx", "pnpm", "yarn", "cargo", "go", "uv", "uvx", "pip", "pip3", "pipx", "poetry", "pytest", "tox",
    "nox", "docker", "podman", "kubectl",
    # programs that start other programs (by option, command, escape or configuration)
    "taskset", "setarch", "linux32", "linux64", "prlimit", "chrt", "setpriv", "runuser", "sg", "newgrp",
    "unbuffer", "faketime", "firejail", "proot", "fakeroot", "catchsegv", "batch", "sudoedit", "numactl", "cgexec",
    "sqlite3", "mysql", "mariadb", "psql", "redis-cli", "mongo", "mongosh",
    "gcc*", "g++*", "cc", "c++", "c89", "c99", "cpp", "clang*", "ld", "ld.*", "gold", "lld", "collect2", "tcc", "rustc",
    "javac", "openssl", "ssh-keygen", "ssh-agent", "ssh-add", "gpg*", "gpgv", "pinentry*",
    "less", "more", "most", "pg", "man", "info", "nano", "pico", "joe", "mcedit", "micro", "view", "vimdiff", "rvim",
    "rview", "gvim", "emacsclient", "mc",
    "dpkg*", "apt*", "aptitude", "rpm*", "yum", "dnf", "zypper", "pacman", "apk", "snap", "flatpak", "brew",
    "nix*", "conda", "mamba", "gem", "bundle", "bundler", "rake", "composer", "mvn", "gradle*", "ant", "sbt",
    "systemctl", "service", "systemd-*", "journalctl", "loginctl", "machinectl", "launchctl", "initctl",
    "anacron", "atq", "atrm", "docker*", "podman*", "buildah", "kubectl*", "helm", "nerdctl", "ctr",
    "lxc*", "virsh", "qemu*", "vagrant", "valgrind", "perf", "bpftrace", "rr", "dtrace", "entr", "inotifywait",
    "byobu", "m4", "dc", "mail", "mailx", "sendmail", "ftp", "telnet", "nc", "ncat", "netcat", "socat", "tftp",
    "xdg-open", "open", "sensible-*", "editor", "pager", "x-terminal-emulator", "run-parts", "login",
)


# Variables a command line may set without asking (all others ask: POSIXLY_CORRECT changes
# how GNU tools parse options, TZ and LOCPATH name files, ...).
HARMLESS_ASSIGNMENTS = frozenset({"COLUMNS", "LINES", "NO_COLOR", "FORCE_COLOR", "CLICOLOR"})
HARMLESS_NAMED = frozenset({"LANG", "LC_ALL", "TERM"})  # and LC_*: only with a fixed value without "/"
HARMLESS_SHOWN = ("LANG", "LC_*", "TERM", *sorted(HARMLESS_ASSIGNMENTS))
NAME = re.compile(r"[A-Z_][A-Z0-9_]*")


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
    if len(command) > MAX_ANALYSED_CHARS:
        return Verdict("ask", (
            f"the command is too long to check ({len(command):,} characters; exec analyses at most "
            f"{MAX_ANALYSED_CHARS:,}): split it up, or put it in a script file",
        ))
    try:
        command.encode("utf-8")
    except UnicodeEncodeError:
        return Verdict("ask", ("cannot be checked: the command holds text that is not valid Unicode (lone surrogates)",))
    token = use_budget(Budget())
    try:
        return _decide(command, given)
    except OverBudget:
        return Verdict("ask", ("cannot be checked: too many files to check (split the command up, or name fewer files)",))
    except Exception:  # a bug in the analysis must not let anything through
        log.exception("exec: the analysis of %r failed", command[:200])
        return Verdict("ask", ("cannot be checked: the command could not be analysed",))
    finally:
        reset_budget(token)


def _decide(command: str, given: PolicyInput) -> Verdict:
    settings = given.settings
    workspace = real_path(os.path.abspath(given.workspace))
    if workspace is None:
        return Verdict("ask", (f"cannot be checked: the workspace {given.workspace} cannot be resolved",))
    given = attrs.evolve(given, workspace=workspace)
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
    always = (
        not hard and not unremembered
        and all(not inside(given.workspace, p.real) and not never_always(p) for p in programs)
    )
    return Verdict("ask", tuple(reasons), allow_always=always, programs=tuple(programs), destructive=bool(hits))


def harmless_assignment(name: str, value: str | None) -> bool:
    """Whether setting ``name`` to ``value`` (None: not a fixed word) cannot change what runs or reads what."""
    if name in HARMLESS_ASSIGNMENTS:
        return True
    if name in HARMLESS_NAMED or (name.startswith("LC_") and NAME.fullmatch(name)):
        # a locale (or terminal) name with "/" is a path: it is loaded from there
        return value is not None and "/" not in value
    return False


def never_always(program: Program) -> bool:
    """Whether ``program`` runs arbitrary code from its arguments (never allowed "always")."""
    names = {program.name, os.path.basename(program.real)}
    return any(fnmatch.fnmatchcase(name, pattern) for name in names for pattern in NEVER_ALWAYS)


def _allowlist_reasons(analysis: Analysis, given: PolicyInput) -> tuple[list[str], list[Program]]:
    reasons = [f"cannot be checked: {problem}" for problem in analysis.problems]
    for name, value in dict.fromkeys(analysis.assignments):
        if is_dangerous(name):
            reason = f"sets {name}, which changes what the commands run"
        elif not harmless_assignment(name, value):
            reason = f"sets {name}, which may change what the commands do (only {', '.join(HARMLESS_SHOWN)} are known to be harmless)"
        else:
            continue
        if reason not in reasons:
            reasons.append(reason)
    compile_ = _compiler(given)
    # a remembered interpreter (stored before it was excluded from "always") is ignored
    remembered = [Entry(p.real, real=p.real, name=p.name) for p in given.remembered if not never_always(p)]
    allowed = compile_(given.settings.allowlist) + remembered
    safe = compile_(given.settings.safe_bins)
    programs: list[Program] = []

    def add(reason: str | None) -> None:
        if reason and reason not in reasons:
            reasons.append(reason)

    for command in analysis.commands:
        if command.builtin:
            continue
        reason, program = _program_reason(command, given, allowed, safe)
        add(reason)
        if program is not None and program not in programs:
            programs.append(program)
    for wrapper in analysis.wrappers:
        add(_wrapper_reason(wrapper, given))
    for redirect in analysis.redirects:
        add(_redirect_reason(redirect, given))
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
        return f"cannot tell which program {command.name!r} is (its directory is not known after cd, or its path goes through /proc)", None
    if program is None:
        return f"{command.name!r} was not found as an executable (it may be created by an earlier command)", None
    if any(entry.matches(program) for entry in allowed):
        return None, None
    if any(entry.matches(program) for entry in safe):
        return safe_bins.check(program.name, command.argv, cwd=command.cwd, workspace=given.workspace, home=given.home), None
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


def _redirect_reason(redirect: Redirect, given: PolicyInput) -> str | None:
    op = redirect.op.lstrip("0123456789")
    target = redirect.target
    if op in ("<<", "<<-", "<<<"):
        return None  # a here-document or here-string: data, not a file
    if target is None:
        return f"cannot be checked: the redirection {redirect.op!r} has no target"
    if op in (">&", "<&") and target.literal and (re.fullmatch("[0-9]+", target.value) or target.value == "-"):
        return None  # 2>&1, >&-
    reading = op in ("<", "<&")
    if not target.literal:
        return f"cannot be checked: the redirection target {target.raw!r} is not a fixed word"
    if target.value in (INPUT_DEVICES if reading else OUTPUT_DEVICES):
        return None
    try:
        real = place(target.value, target.raw, tilde=target.tilde, cwd=redirect.cwd, home=given.home)
    except Unplaceable as exc:
        return f"cannot be checked: cannot tell {exc}"
    if inside(given.workspace, real):
        return None
    if reading:
        return f"reads {target.value} outside the workspace"
    return f"writes to {target.value} outside the workspace"
