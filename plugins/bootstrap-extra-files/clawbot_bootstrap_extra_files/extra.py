"""Editing the bootstrap file list: replace, drop, then add files matched by patterns.

Everything read must be inside the workspace. Files are read with the kernel's guard,
``read_bounded(path, root=workspace)``, which checks the file actually opened (so a link
swapped in while opening cannot win) and refuses a second hard link; a refused file goes
into the list as the kernel's one-line note saying it was not loaded and why, never its
content, so ``clawbot context`` shows it too. The size caps apply to added files exactly as
to the standard ones.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Iterable
from pathlib import Path

from clawbot import BootstrapContext, BootstrapFile

from clawbot_bootstrap_extra_files.config import ExtraFilesConfig

log = logging.getLogger(__name__)

# The default loader's files: it decides who gets them (MEMORY.md only in the main session),
# so a pattern like "*.md" must not add them to other sessions behind its back. Compared in
# lower case: "memory.md" is MEMORY.md too.
STANDARD_NAMES = frozenset(n.lower() for n in ("AGENTS.md", "SOUL.md", "TOOLS.md", "IDENTITY.md", "USER.md", "HEARTBEAT.md", "BOOTSTRAP.md", "MEMORY.md"))
SCAN_LIMIT = 20_000
"""At most this many files are looked at for one pattern (a '**' over a huge tree)."""
_WILDCARD = re.compile(r"[*?\[]")


def _read(path: Path, name: str, workspace: Path, max_chars: int, what: str) -> str | None:
    """The file's text, the kernel's note if it is refused, or ``None`` (missing, unreadable)."""
    from clawbot.promptkit import FileRefused, not_loaded, read_bounded

    try:
        return read_bounded(path, max_chars=max_chars, root=workspace)
    except FileRefused as exc:
        log.warning("bootstrap-extra-files: %s %s is not loaded: %s", what, path, exc)
        return not_loaded(name, exc.reason)
    except OSError as exc:
        log.warning("bootstrap-extra-files: %s %s cannot be read: %s", what, path, exc)
        return None


def _matches(workspace: Path, pattern: str) -> list[str]:
    """Workspace-relative paths of the files ``pattern`` matches, sorted.

    Walks only below the pattern's literal leading folders, only as deep as the pattern
    reaches (any depth with ``**``), never into symlinked folders (no loops, no escapes) and
    never into hidden names unless the pattern spells them out literally.
    """
    parts = [p for p in pattern.replace("\\", "/").split("/") if p not in ("", ".")]
    literal = 0
    while literal < len(parts) and parts[literal] != "**" and not _WILDCARD.search(parts[literal]):
        literal += 1
    prefix, rest = parts[:literal], parts[literal:]
    base = workspace.joinpath(*prefix)
    if not rest:  # no wildcard at all: one path
        return ["/".join(prefix)] if prefix and os.path.lexists(base) else []
    from clawbot.globs import GlobError, compile_glob

    try:
        match = compile_glob("/".join(rest))
    except GlobError as exc:
        log.warning("bootstrap-extra-files: pattern %r is not used: %s", pattern, exc)
        return []
    depth_limit = None if "**" in rest else len(rest)
    found: list[str] = []
    seen = 0
    for dirpath, dirnames, filenames in os.walk(base, followlinks=False):
        here = os.path.relpath(dirpath, base)
        inner = [] if here == "." else here.split(os.sep)
        if depth_limit is not None and len(inner) + 1 >= depth_limit:
            dirnames[:] = []
        else:
            dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in sorted(filenames):
            if name.startswith("."):
                continue
            seen += 1
            if match("/".join([*inner, name])):
                found.append("/".join([*prefix, *inner, name]))
        if seen >= SCAN_LIMIT:
            log.warning("bootstrap-extra-files: pattern %r looked at %d files and stopped there", pattern, SCAN_LIMIT)
            break
    return sorted(found)


def edit_files(files: Iterable[BootstrapFile] | None, ctx: BootstrapContext, settings: ExtraFilesConfig) -> list[BootstrapFile]:
    out = list(files or [])
    workspace = Path(ctx.workspace)
    max_chars = ctx.clawbot.bootstrap_max_chars

    for index, file in enumerate(out):
        target = settings.replace.get(file.name)
        if target is None:
            continue
        path = workspace / target
        content = _read(path, file.name, workspace, max_chars, f"replace.{file.name}")
        if content is None:
            log.warning("bootstrap-extra-files: replace.%s: %s does not exist; %s is kept", file.name, path, file.name)
            continue
        out[index] = BootstrapFile(file.name, path, content)

    drop = set(settings.drop)
    out = [f for f in out if f.name not in drop]

    if ctx.session_kind not in settings.session_kinds or not settings.patterns:
        return out
    seen = {os.path.realpath(f.path) for f in out}
    added = skipped = 0
    for pattern in settings.patterns:
        for rel in _matches(workspace, pattern):
            if rel.lower() in STANDARD_NAMES or rel in drop:
                continue
            path = workspace / rel
            real = os.path.realpath(path)
            if real in seen or not os.path.isfile(real):
                continue
            if added >= settings.max_files:
                skipped += 1
                continue
            content = _read(path, rel, workspace, max_chars, "file")
            if content is None:
                continue
            seen.add(real)
            out.append(BootstrapFile(rel, path, content))
            added += 1
    if skipped:
        log.warning("bootstrap-extra-files: %d more matching files left out (max_files = %d)", skipped, settings.max_files)
    return out
