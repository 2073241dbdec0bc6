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
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Iterable

import attrs

GLOB_CHARS = "*?["


@attrs.frozen
class Program:
    """A resolved program: ``real`` is its real path, ``name`` the base name it runs under."""

    real: str
    name: str


def inside(root: str, path: str) -> bool:
    try:
        return os.path.commonpath([root, path]) == root
    except ValueError:
        return False


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
        found = name if _is_executable(name) else None
    else:
        found = which(name, path_value, cwd)
    if found is None:
        return None
    return Program(os.path.realpath(found), os.path.basename(found))


def trusted_path(path_value: str, workspace: str) -> str:
    """``path_value`` without relative entries and without directories inside the workspace."""
    keep = [
        entry for entry in path_value.split(os.pathsep)
        if entry and os.path.isabs(entry) and not inside(workspace, os.path.realpath(entry))
    ]
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
            return len(parts) == len(self.pattern) and all(
                fnmatch.fnmatchcase(part, pat) for part, pat in zip(parts, self.pattern, strict=True)
            ) and fnmatch.fnmatchcase(program.name, self.pattern[-1])
        return program.real == self.real and program.name == self.name


def compile_entries(texts: Iterable[str], *, path_value: str, workspace: str, home: str | None) -> list[Entry]:
    """Allowlist entries as :class:`Entry`; names that resolve to nothing are left out."""
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
