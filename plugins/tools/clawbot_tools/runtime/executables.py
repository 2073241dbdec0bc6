"""Which file a program name runs, and whether an allowlist entry covers that file.

Decisions are made on the real path of the executable the shell would run (PATH lookup
as ``/bin/sh`` does it, relative PATH entries against the command's directory, then every
symlink followed), so ``/bin/../bin/rm``, a symlink called ``ls`` and a ``./ls`` in the
workspace are all judged as what they really are.

A name entry (``"ls"``) stands for what that name resolves to on the *trusted* part of
PATH: absolute directories outside the workspace, because the model can write files in
the workspace. A program inside the workspace therefore never matches a name entry or a
safe bin; only an explicit path entry (``/home/me/project/tool``) can allow it. Multi-call
binaries (busybox: ``ls`` and ``rm`` are one file) are told apart by the name they are run
under: an entry matches only if the real path *and* the program's base name agree.

Paths are resolved with :func:`real_path`, never ``os.path.realpath``: the gate runs in
clawbot's process, not in the shell, so ``/proc/self/cwd`` or ``/dev/fd/3`` would point
into *clawbot's* state. Any step through ``/proc`` (``/dev/fd``, ``/dev/stdin`` ... are
links into it) makes a path unknown, and so does a loop or more than 40 symlinks. Every
resolution counts against a per-decision :class:`Budget`; past it, :class:`OverBudget` is
raised (the policy then asks).
"""

from __future__ import annotations

import contextvars
import errno
import fnmatch
import os
import stat
import time
from collections.abc import Iterable

import attrs
from clawbot.paths import inside

GLOB_CHARS = "*?["
MAX_SYMLINKS = 40  # what Linux follows in one lookup
MAGIC_ROOTS = ("/proc",)  # links there point into the process that looks (clawbot), not the shell
MAX_PATHS = 2000  # paths resolved per decision


class OverBudget(Exception):
    """A decision would resolve too many paths."""


class Budget:
    def __init__(self, paths: int = MAX_PATHS) -> None:
        self.paths = paths

    def spend(self, paths: int) -> None:
        self.paths -= paths
        if self.paths < 0:
            raise OverBudget("too many paths to resolve")


_budget: contextvars.ContextVar[Budget | None] = contextvars.ContextVar("exec_gate_budget", default=None)


def use_budget(budget: Budget | None) -> contextvars.Token:
    """Make ``budget`` the one :func:`real_path` spends (reset with the token)."""
    return _budget.set(budget)


def reset_budget(token: contextvars.Token) -> None:
    _budget.reset(token)


def spend(paths: int) -> None:
    budget = _budget.get()
    if budget is not None:
        budget.spend(paths)


def _magic(path: str) -> bool:
    return any(path == root or path.startswith(root + "/") for root in MAGIC_ROOTS)


class Unplaceable(Exception):
    """Where a word names cannot be told; ``str(exc)`` says why (after "cannot tell ...")."""


def place(text: str, raw: str, *, tilde: bool, cwd: str | None, home: str | None) -> str:
    """The real path a file operand or redirect target names, as the shell will see it.

    Raises :class:`Unplaceable` for ``~user`` (or ``~`` without a home), a relative path
    while the directory is unknown, or a path :func:`real_path` will not resolve.
    """
    path = text
    if tilde:
        if not home or not (text == "~" or text.startswith("~/")):
            raise Unplaceable(f"which file {raw!r} is (~user, or no home directory)")
        path = home + text[1:]
    if not os.path.isabs(path) and cwd is None:
        raise Unplaceable(f"which file {raw!r} is (the directory is not known after cd)")
    real = real_path(os.path.join(cwd or "/", path))
    if real is None:
        raise Unplaceable(f"which file {raw!r} is (it goes through /proc, or through too many symlinks)")
    return real


def real_path(path: str) -> str | None:
    """The real path of absolute ``path`` (symlinks followed), or ``None`` when unknown.

    Unknown: a step through ``/proc`` (directly or by a symlink: ``/dev/fd`` ...), more
    than :data:`MAX_SYMLINKS` links, a ``..`` after a component that does not exist, or an
    error other than "does not exist". A missing tail is appended as written (normalised),
    like ``os.path.realpath``.
    """
    if not path.startswith("/"):
        return None
    spend(paths=1)
    pending = [part for part in path.split("/") if part]
    pending.reverse()  # a stack: the next component is last
    resolved = "/"
    links = 0
    while pending:
        part = pending.pop()
        if part == ".":
            continue
        if part == "..":
            resolved = os.path.dirname(resolved)  # resolved holds no symlink: this is the real parent
            continue
        candidate = os.path.join(resolved, part)
        if _magic(candidate):
            return None
        try:
            info = os.lstat(candidate)
        except OSError as exc:
            if exc.errno not in (errno.ENOENT, errno.ENOTDIR):
                return None
            rest = [p for p in reversed(pending) if p != "."]
            if ".." in rest:
                return None
            return os.path.join(candidate, *rest) if rest else candidate
        except ValueError:  # an embedded NUL
            return None
        if not stat.S_ISLNK(info.st_mode):
            resolved = candidate
            continue
        links += 1
        if links > MAX_SYMLINKS:
            return None
        try:
            target = os.readlink(candidate)
        except OSError:
            return None
        if target.startswith("/"):
            resolved = "/"
            if _magic(os.path.normpath(target)):
                return None
        pending.extend(reversed([p for p in target.split("/") if p]))
    return resolved


@attrs.frozen
class Program:
    """A resolved program: ``real`` is its real path, ``name`` the base name it runs under."""

    real: str
    name: str


def _is_executable(path: str) -> bool:
    return os.path.isfile(path) and os.access(path, os.X_OK)


def which(name: str, path_value: str, cwd: str | None) -> str | None:
    """The file ``name`` runs from (before symlinks are followed), or ``None``.

    Raises ``LookupError`` when the answer depends on an unknown directory (a relative
    PATH entry while ``cwd`` is unknown).
    """
    for entry in path_value.split(os.pathsep):
        directory = entry or "."
        if not os.path.isabs(directory):
            if cwd is None:
                raise LookupError(name)
            directory = os.path.join(cwd, directory)
        candidate = os.path.join(directory, name)
        if "proc" in directory and _magic(os.path.normpath(directory)):
            raise LookupError(name)
        if _is_executable(candidate):
            return candidate
    return None


def resolve(name: str, path_value: str, cwd: str | None) -> Program | None:
    """The program the shell runs for ``name`` in ``cwd``; ``None`` when there is none.

    Raises ``LookupError`` when that depends on an unknown directory.
    """
    if "/" in name:
        if not os.path.isabs(name):
            if cwd is None:
                raise LookupError(name)
            name = os.path.join(cwd, name)
        if real_path(name) is None:
            raise LookupError(name)  # through /proc: it would be judged in clawbot's process
        found = name if _is_executable(name) else None
    else:
        found = which(name, path_value, cwd)
    if found is None:
        return None
    real = real_path(found)
    if real is None:
        raise LookupError(name)
    return Program(real, os.path.basename(found))


def trusted_path(path_value: str, workspace: str) -> str:
    """``path_value`` without relative entries and without directories inside the workspace."""
    keep = [entry for entry in path_value.split(os.pathsep) if entry and os.path.isabs(entry) and not inside(workspace, os.path.realpath(entry))]
    return os.pathsep.join(keep)


@attrs.frozen
class Entry:
    """One allowlist entry, ready to match: a resolved name, an exact path or a path glob."""

    text: str
    real: str | None = None  # exact: the real path
    name: str | None = None  # exact: the base name it runs under
    pattern: tuple[str, ...] | None = None  # glob: path segments

    def matches(self, program: Program) -> bool:
        if self.pattern is not None:
            parts = program.real.split("/")
            return (
                len(parts) == len(self.pattern)
                and all(fnmatch.fnmatchcase(part, pat) for part, pat in zip(parts, self.pattern, strict=True))
                and fnmatch.fnmatchcase(program.name, self.pattern[-1])
            )
        return program.real == self.real and program.name == self.name


# Resolving every allowlist and safe-bin name over PATH was 80% of a decision (~0.6 ms).
# A short-lived memo is safe: a stale entry matches a program only if the program, freshly
# resolved for the command, still has that name and real path, so staleness can only make
# the gate ask, never let more run.
_COMPILED: dict[tuple[object, ...], tuple[float, tuple[Entry, ...]]] = {}
COMPILED_TTL_S = 5.0
COMPILED_MAX = 64


def compile_entries(texts: Iterable[str], *, path_value: str, workspace: str, home: str | None) -> list[Entry]:
    """Allowlist entries as :class:`Entry`; names that resolve to nothing are left out."""
    texts = tuple(texts)
    key = (texts, path_value, workspace, home)
    now = time.monotonic()
    hit = _COMPILED.get(key)
    if hit is not None and now - hit[0] < COMPILED_TTL_S:
        return list(hit[1])
    entries = _compile(texts, path_value=path_value, workspace=workspace, home=home)
    if len(_COMPILED) >= COMPILED_MAX:
        _COMPILED.clear()
    _COMPILED[key] = (now, tuple(entries))
    return entries


def _compile(texts: tuple[str, ...], *, path_value: str, workspace: str, home: str | None) -> list[Entry]:
    trusted = trusted_path(path_value, workspace)
    entries: list[Entry] = []
    for text in texts:
        text = text.strip()
        if text.startswith("~") and home:
            text = home + text[1:] if text == "~" or text.startswith("~/") else text
        if "/" not in text:
            found = which(text, trusted, None) if trusted else None
            real = os.path.realpath(found) if found is not None else None
            if real is not None and not inside(workspace, real):
                entries.append(Entry(text, real=real, name=text))
            continue
        if not os.path.isabs(text):
            continue  # a relative path means nothing stable
        if any(c in text for c in GLOB_CHARS):
            entries.append(Entry(text, pattern=tuple(_real_prefix(text).split("/"))))
        else:
            entries.append(Entry(text, real=os.path.realpath(text), name=os.path.basename(text)))
    return entries


def _real_prefix(pattern: str) -> str:
    """``pattern`` with its leading glob-free directories resolved (``/bin/*`` -> ``/usr/bin/*``)."""
    parts = pattern.split("/")
    cut = next(i for i, part in enumerate(parts) if any(c in part for c in GLOB_CHARS))
    head = "/".join(parts[:cut]) or "/"
    real_head = os.path.realpath(head)
    return real_head.rstrip("/") + "/" + "/".join(parts[cut:])
