"""The gate of ``exec``: run now, ask the user, or refuse.

The gate decides *when to ask*; what a command can touch is enforced by the OS sandbox
(:mod:`~clawbot_tools.runtime.sandbox`), so a mistake here no longer reaches the user's
files or network. ``PolicyInput.confined`` says whether the command will run inside one.

* ``deny``: refuse everything.
* ``full``: run everything, except destructive patterns and sudo-like commands, which ask.
* ``allowlist``: fail-closed. A line runs unasked only when the analysis (see
  :mod:`~clawbot_tools.runtime.shell_analysis`) found nothing it could not pin down, and
  *every* program it starts resolves to an allowed executable: an ``allowlist`` entry, an
  executable the user allowed always, a harmless shell builtin, or a ``safe_bins`` utility
  whose options pass :mod:`~clawbot_tools.runtime.safe_bins`. A variable may be set for
  commands (``NAME=value cmd``, ``env NAME=value``, ``export NAME=value``) only if the
  model could set it through ``env`` too (:func:`~clawbot_tools.runtime.envscrub.settable`).
  Anything else asks, never refuses. Destructive patterns and sudo-like commands ask even
  when allowlisted.

  Inside a sandbox, files are the sandbox's business: safe bins read any operand the
  sandbox lets them read, globs expand to what it lets them list, and a redirect writes
  where it lets it write. One thing the sandbox cannot see is a hard link: a workspace file
  that is also a name of ``~/.bashrc`` is writable through the workspace, so an output
  redirect into a file with more than one link asks (the ``write`` tool refuses them too).
  Without a sandbox, the gate asks before anything reads or names a file: safe bins are
  stdin-only, globs and ``test -e``-style lookups ask, and every redirect to a file asks
  (``/dev/null`` and the standard streams excepted).

In every mode, a line holding lone surrogates (text that is not valid Unicode) asks, and
so does any error inside the analysis: :func:`decide` never raises. In every mode but
``deny``, a line longer than :data:`MAX_ANALYSED_CHARS` asks without being analysed.

"Allow always" (``Verdict.always``) is offered only when nothing but programs stands in
the way: ``"programs"`` when each of them is on :data:`ALWAYS_OK` (programs that run no code
from their arguments, input or configuration) and none lies inside the workspace;
otherwise ``"command"``, which remembers this exact command line only. Never for
destructive lines, lines the analysis could not pin down, or programs inside the workspace
(files the model can rewrite).
"""

from __future__ import annotations

import errno
import logging
import os
import re
from collections.abc import Iterable
from typing import Literal

import attrs

from clawbot_tools.runtime import safe_bins
from clawbot_tools.runtime.config import ExecSettings
from clawbot_tools.runtime.destructive import destructive
from clawbot_tools.runtime.envscrub import SETTABLE_SHOWN, settable
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
from clawbot_tools.runtime.sandbox.paths import SYSTEM_TREES
from clawbot_tools.runtime.shell_analysis import Analysis, Command, Redirect, analyse

log = logging.getLogger(__name__)

MAX_ANALYSED_CHARS = 8000
# Exact texts (not resolved: "/dev/fd/../x" is none of them) a redirection may name.
OUTPUT_DEVICES = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/fd/1", "/dev/fd/2"})
# not /dev/zero or /dev/urandom: endless input, and sort would spill it to temporary files without end
INPUT_DEVICES = frozenset({"/dev/null", "/dev/stdin", "/dev/fd/0"})
# Trees every sandbox lets commands read (looking a name up there reveals nothing private).
READABLE_TREES = (*SYSTEM_TREES, "/dev", "/proc/self")
ENDLESS_INPUT = frozenset({"/dev/zero", "/dev/urandom", "/dev/random"})
# Programs "allow always" may remember (with any arguments, for this agent): they run no
# code from their arguments, input, environment or configuration files. Everything else is
# remembered as the one exact command line the user approved. Not here, on purpose: sort
# (--compress-program), split (--filter), tar, zip, sed (e), awk, find, xargs, env, less,
# editors, interpreters, compilers and their wrappers, build tools, pydoc, pygmentize,
# logsave, capsh, git, curl, wget (-e runs wgetrc commands), rg (--pre), diff3/sdiff
# (--diff-program).
ALWAYS_OK = frozenset(
    """
    cat tac nl od hexdump xxd base32 base64 basenc md5sum sha1sum sha224sum sha256sum sha384sum
    sha512sum b2sum cksum sum wc head tail cut paste join comm diff cmp uniq tr fold fmt pr expand
    unexpand column rev seq yes shuf tsort numfmt factor expr echo printf basename dirname realpath
    readlink pwd ls dir vdir stat du df tree file grep egrep fgrep jq date cal uname id whoami groups
    nproc free uptime ps true false sleep touch mkdir rmdir cp mv rm ln chmod tee truncate gzip gunzip
    zcat bzip2 bunzip2 bzcat xz unxz xzcat zstd unzstd iconv
    """.split()
)

# Programs whose harm is a file's mode, owner, times or attributes, which Landlock does not mediate
METADATA_PROGRAMS = frozenset({"chmod", "chown", "chgrp", "touch", "setfacl", "setfattr", "chattr"})


@attrs.frozen
class Verdict:
    action: Literal["run", "ask", "refuse"]
    reasons: tuple[str, ...] = ()
    # what "allow always" may remember: the programs (any arguments), this exact command, or nothing
    always: Literal["programs", "command"] | None = None
    programs: tuple[Program, ...] = ()  # programs not yet allowed (what "always" stores)
    destructive: bool = False
    withheld: str | None = None  # why "always" is not offered for a line the gate would remember

    @property
    def allow_always(self) -> bool:
        return self.always is not None


@attrs.frozen
class PolicyInput:
    settings: ExecSettings
    cwd: str
    workspace: str
    path_value: str
    home: str | None
    remembered: tuple[Program, ...] = ()
    confined: bool = False  # the command runs inside an OS sandbox
    hides_names: bool = False  # ... one in which paths outside its policy do not exist (no stat oracle)
    guards_metadata: bool = False  # ... one that also keeps modes and times of files outside as they are


def decide(command: str, given: PolicyInput) -> Verdict:
    settings = given.settings
    if settings.security == "deny":
        return Verdict("refuse", ('exec is disabled ([plugins.tools.exec] security = "deny")',))
    if len(command) > MAX_ANALYSED_CHARS:
        return Verdict(
            "ask",
            (
                f"the command is too long to check ({len(command):,} characters; exec analyses at most "
                f"{MAX_ANALYSED_CHARS:,}): split it up, or put it in a script file",
            ),
        )
    try:
        command.encode("utf-8")
    except UnicodeEncodeError:
        return Verdict("ask", ("cannot be checked: the command holds text that is not valid Unicode (lone surrogates)",))
    token = use_budget(Budget())
    try:
        return _decide(command, given)
    except OverBudget:
        return Verdict("ask", ("cannot be checked: too many paths to resolve (split the command up)",))
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
    always: Literal["programs", "command"] | None = None
    # a program inside the workspace is a file the model can rewrite: never remembered at all
    if not hard and not unremembered and not any(inside(given.workspace, p.real) for p in programs):
        always = "programs" if all(rememberable(p, given) for p in programs) else "command"
    return Verdict("ask", tuple(reasons), always=always, programs=tuple(programs), destructive=bool(hits))


def names_outside(text: str) -> bool:
    """Whether the file name ``text`` may point outside the workspace and the system trees
    (``~/...``, ``..``, an absolute path elsewhere): with a sandbox that does not hide names,
    looking it up tells whether it exists."""
    if text.startswith("~") or ".." in text.split("/"):
        return True
    return text.startswith("/") and not any(inside(tree, os.path.normpath(text)) for tree in READABLE_TREES)


def always_ok(program: Program) -> bool:
    """Whether "allow always" may remember ``program`` itself (see :data:`ALWAYS_OK`): by the
    name it runs under *and* its real file's name (``ls`` linked to ``python3`` is not ``ls``)."""
    return program.name in ALWAYS_OK and os.path.basename(program.real) in ALWAYS_OK


def rememberable(program: Program, given: PolicyInput) -> bool:
    """Whether "allow always" may let ``program`` run with any arguments here: one of
    :data:`ALWAYS_OK`, and only where the sandbox is what keeps its arguments harmless
    (unconfined, ``cat ~/.ssh/id_rsa`` would read the key), and programs that change a file's
    mode or times only where the sandbox stops that outside the workspace."""
    if not given.confined or not always_ok(program):
        return False
    return given.guards_metadata or not {program.name, os.path.basename(program.real)} & METADATA_PROGRAMS


def _allowlist_reasons(analysis: Analysis, given: PolicyInput) -> tuple[list[str], list[Program]]:
    reasons = [f"cannot be checked: {problem}" for problem in analysis.problems]
    allowed_names = given.settings.env_allow
    for name, value in dict.fromkeys(analysis.assignments):
        if not settable(name, value, allowed_names):
            reason = f"sets {name}, which may change what the commands run or read (only {', '.join(SETTABLE_SHOWN)} are known to be harmless)"
            if reason not in reasons:
                reasons.append(reason)
    if not given.confined:
        reasons += [f"{what} (without a sandbox, exec asks before a command looks at files by name)" for what, _ in analysis.reveals]
    elif not given.hides_names:
        reasons += [
            f"{what} (this sandbox hides what files outside hold, not whether they exist)"
            for what, name in analysis.reveals
            if name is not None and names_outside(name)
        ]
    compile_ = _compiler(given)
    # a program remembered by an older version that is not on ALWAYS_OK any more is ignored, and
    # so is every one where the sandbox that made its arguments harmless is not there
    remembered = [Entry(p.real, real=p.real, name=p.name) for p in given.remembered if rememberable(p, given)]
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
        found = safe_bins.check(
            program.name,
            command.argv,
            confined=given.confined,
            cwd_known=command.cwd is not None,
            names_outside=None if given.hides_names else names_outside,
        )
        return found, None
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
    if reading:
        if target.value in ENDLESS_INPUT:
            return f"reads {target.value}, which never ends"
        return None if given.confined else f"reads the file {target.value} (without a sandbox, exec asks before a command reads files)"
    if not given.confined:
        return f"writes to the file {target.value} (without a sandbox, exec asks before a command writes files)"
    return _linked(target.value, target.raw, target.tilde, redirect.cwd, given.home)


def _linked(text: str, raw: str, tilde: bool, cwd: str | None, home: str | None) -> str | None:
    """Why writing ``text`` could change a file outside the sandbox through a hard link."""
    try:
        real = place(text, raw, tilde=tilde, cwd=cwd, home=home)
    except Unplaceable as exc:
        return f"cannot be checked: cannot tell {exc}"
    try:
        links = os.stat(real).st_nlink
    except OSError as exc:
        if exc.errno in (errno.ENOENT, errno.ENOTDIR):
            return None  # a new file has one name
        return f"cannot be checked: {text} cannot be examined ({exc.strerror})"
    if links > 1 and not os.path.isdir(real):
        return f"writes to {text}, a file with {links} hard links (writing it changes the file under its other names too)"
    return None
