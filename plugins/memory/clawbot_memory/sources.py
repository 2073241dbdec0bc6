"""Which files are an agent's memory: MEMORY.md (or memory.md), memory/**/*.md and the
configured extra paths, and nothing else.

Every file is checked by its real path (symlinks resolved): one that leads outside the
workspace and the extra paths is refused, so a link cannot pull a private file into the
index or into ``memory_get``. A file is opened the one way every workspace file is
(:mod:`clawbot.workspacefiles`): a regular file with one hard link, never blocking on a FIFO.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Container, Iterable, Sequence
from pathlib import Path
from typing import BinaryIO

import attrs
from clawbot.paths import expand_user_path, inside
from clawbot.types import MemoryPathError
from clawbot.workspacefiles import FileRefused, LeadsOutside, open_file

ROOT_FILES = ("MEMORY.md", "memory.md")
MEMORY_DIR = "memory"
#: A Markdown file larger than this is not memory but an accident; it is skipped, not read.
MAX_FILE_BYTES = 16 * 1024 * 1024


@attrs.frozen
class MemoryFile:
    """One file to index: ``path`` as hits show it (relative to the workspace, POSIX
    slashes; absolute for an extra path outside the workspace), ``full`` on disk."""

    path: str
    full: Path
    source: str  # "memory" | "extra"


@attrs.frozen
class Scan:
    files: tuple[MemoryFile, ...]
    skipped: tuple[tuple[str, str], ...]


def _is_markdown(name: str) -> bool:
    return name.lower().endswith(".md")


@attrs.frozen
class Sources:
    """The memory files of one workspace plus the configured extra paths."""

    workspace: Path
    extra: tuple[Path, ...] = ()

    @classmethod
    def build(cls, workspace: Path, extra_paths: Sequence[str], env: dict[str, str] | None = None) -> Sources:
        workspace = Path(os.path.abspath(workspace))
        extra = []
        for raw in extra_paths:
            path = expand_user_path(raw, env)
            extra.append(Path(os.path.abspath(path if path.is_absolute() else workspace / path)))
        return cls(workspace=workspace, extra=tuple(extra))

    # -- where files may be --------------------------------------------------------------

    def allowed_roots(self) -> list[str]:
        """Real paths a memory file's real path must lie in."""
        return [os.path.realpath(self.workspace)] + [os.path.realpath(p) for p in self.extra]

    def identity(self) -> str:
        """Which folders an index of these sources covers (recorded in it)."""
        return "\n".join(self.allowed_roots())

    def _allowed(self, full: Path, roots: list[str] | None = None) -> bool:
        real = os.path.realpath(full)
        return any(inside(root, real) for root in (roots if roots is not None else self.allowed_roots()))

    def display(self, full: Path) -> str:
        if inside(str(self.workspace), str(full)):
            return full.relative_to(self.workspace).as_posix()
        return str(full)

    def _source_of(self, full: Path) -> str:
        rel = self.display(full)
        if rel in ROOT_FILES or rel.startswith(MEMORY_DIR + "/"):
            return "memory"
        return "extra"

    def _is_memory_path(self, full: Path) -> bool:
        """Whether a lexical absolute path is one of the places memory lives (hidden files and
        folders below a memory folder are not, as the listing skips them)."""
        if not _is_markdown(full.name):
            return False
        if full.parent == self.workspace and full.name in ROOT_FILES:
            return True
        for root in (self.workspace / MEMORY_DIR, *self.extra):
            if full == root or inside(str(root), str(full)):
                if not any(part.startswith(".") for part in full.relative_to(root).parts):
                    return True
        return False

    # -- listing -------------------------------------------------------------------------

    def scan(self) -> Scan:
        """Every memory file on disk now, and the ones refused with the reason.

        Called before every search (to see whether the index is stale), so it costs one
        directory listing per folder and one stat per file, plus a realpath per link."""
        found: dict[str, MemoryFile] = {}
        skipped: list[tuple[str, str]] = []
        seen_real: set[str] = set()
        roots = self.allowed_roots()

        def add(full: Path, shown: str, source: str, real: str, checked: bool = False) -> None:
            if shown in found:
                return
            if checked is not True and not any(inside(root, real) for root in roots):
                skipped.append((shown, "it links outside the workspace and the extra paths"))
                return
            if real in seen_real:  # the same file under two names (a link, a case-insensitive disk)
                return
            seen_real.add(real)
            found[shown] = MemoryFile(path=shown, full=full, source=source)

        for name in ROOT_FILES:
            full = self.workspace / name
            if full.is_file():
                add(full, name, "memory", os.path.realpath(full))
        self._walk(self.workspace / MEMORY_DIR, add, skipped, roots)
        for extra in self.extra:
            if extra.is_dir():
                self._walk(extra, add, skipped, roots)
            elif extra.is_file():
                if _is_markdown(extra.name):
                    add(extra, self.display(extra), self._source_of(extra), os.path.realpath(extra))
                else:
                    skipped.append((self.display(extra), "an extra path must be a Markdown (.md) file or a folder"))
        return Scan(files=tuple(sorted(found.values(), key=lambda f: f.path)), skipped=tuple(skipped))

    def _walk(self, top: Path, add, skipped: list[tuple[str, str]], roots: list[str]) -> None:
        if not top.is_dir():
            return
        source = self._source_of(top / "x.md")
        visited: set[str] = set()
        for dirpath, dirnames, _ in os.walk(top, followlinks=True):
            here = Path(dirpath)
            shown_dir = self.display(here)
            real = os.path.realpath(here)
            if real in visited:  # a link loop
                dirnames[:] = []
                continue
            visited.add(real)
            if not any(inside(root, real) for root in roots):
                skipped.append((shown_dir, "it links outside the workspace and the extra paths"))
                dirnames[:] = []
                continue
            dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
            prefix = "" if shown_dir in ("", ".") else shown_dir.rstrip("/") + "/"
            with os.scandir(here) as entries:
                for entry in entries:
                    name = entry.name
                    if not _is_markdown(name) or name.startswith("."):
                        continue
                    if not entry.is_file():  # a folder, a dead link, a fifo or a socket
                        continue
                    if entry.is_symlink():
                        add(here / name, prefix + name, source, os.path.realpath(entry.path))
                    else:  # in a folder whose real path was checked just above
                        add(here / name, prefix + name, source, os.path.join(real, name), True)

    def changed(self, paths: Iterable[Path], known: Container[str]) -> tuple[list[MemoryFile], list[str], list[str]] | None:
        """What a set of changed paths (from the watcher) means for the index, without
        listing every folder: (memory files to look at again, indexed paths now gone, other
        names now gone that may have been folders), or None when only a full :meth:`scan`
        can tell (a folder or a link)."""
        files: list[MemoryFile] = []
        gone: list[str] = []
        vanished: list[str] = []
        for raw in paths:
            full = Path(os.path.abspath(raw))
            if self._hidden(full):
                continue  # nothing below a hidden name is listed (an editor's swap file)
            shown = self.display(full)
            try:
                st = os.lstat(full)
            except FileNotFoundError:
                if shown in known:
                    gone.append(shown)
                elif not self._is_memory_path(full) and self.is_watched_change(full):
                    vanished.append(shown)
                continue
            except OSError:
                return None
            if not self._is_memory_path(full):
                if self.is_watched_change(full) and not stat.S_ISREG(st.st_mode):
                    return None  # a folder came or moved: what is in it is unknown
                continue
            if not stat.S_ISREG(st.st_mode) or os.path.realpath(full) != str(full):
                return None  # a link (or a folder behind one): the full scan checks where it leads
            files.append(MemoryFile(path=shown, full=full, source=self._source_of(full)))
        return files, gone, vanished

    def _hidden(self, full: Path) -> bool:
        """Whether the scan leaves ``full`` out for a name starting with a dot below its folder."""
        for root in (self.workspace / MEMORY_DIR, *self.extra):
            if full != root and inside(str(root), str(full)):
                return any(part.startswith(".") for part in full.relative_to(root).parts)
        return False

    # -- one file, by the name a model or a user gives --------------------------------------

    def resolve(self, path: str) -> MemoryFile:
        """The memory file ``path`` names (relative to the workspace, or absolute), or
        :class:`MemoryPathError` saying why it is not one."""
        text = (path or "").strip()
        if not text:
            raise MemoryPathError("no path given: name a memory file such as MEMORY.md or memory/2026-01-20.md")
        raw = expand_user_path(text)
        full = Path(os.path.abspath(raw if raw.is_absolute() else self.workspace / raw))
        if not self._is_memory_path(full):
            raise MemoryPathError(
                f"{text} is not a memory file: memory is MEMORY.md, memory/**/*.md"
                + (" and the configured extra paths" if self.extra else "")
                + " (Markdown only)"
            )
        if not full.is_file():
            raise MemoryPathError(f"{text} does not exist")
        if not self._allowed(full):
            raise MemoryPathError(f"{text} links outside the workspace and the extra paths, so it is not read")
        return MemoryFile(path=self.display(full), full=full, source=self._source_of(full))

    def open(self, file: MemoryFile) -> BinaryIO:
        """``file`` opened for reading the one safe way (:func:`clawbot.workspacefiles.open_file`),
        confined to the workspace or the extra path its real path lies in: the file held must
        be a regular file inside it with no other hard link. A name swapped for a link or a
        pipe between the listing and the read is refused, not followed. Raises
        :class:`MemoryPathError` (or ``OSError`` when there is nothing to open)."""
        real = os.path.realpath(file.full)
        root = next((root for root in self.allowed_roots() if inside(root, real)), None)
        if root is None:
            raise MemoryPathError(f"{file.path} links outside the workspace and the extra paths, so it is not read")
        try:
            fd = open_file(file.full, root)
        except LeadsOutside:
            raise MemoryPathError(f"{file.path} links outside the workspace and the extra paths, so it is not read") from None
        except FileRefused as exc:
            raise MemoryPathError(f"{file.path} {exc.summary}") from None
        return os.fdopen(fd, "rb")

    def watch_roots(self) -> tuple[list[Path], list[Path]]:
        """(folders to watch with their subfolders, folders to watch alone): the memory
        folder and extra folders deep; the workspace itself (for MEMORY.md and the memory
        folder appearing) and the folders of extra files flat."""
        deep = [p for p in [self.workspace / MEMORY_DIR, *self.extra] if p.is_dir()]
        flat = [p for p in [self.workspace, *(e.parent for e in self.extra if not e.is_dir())] if p.is_dir()]
        return sorted(set(deep)), sorted(set(flat) - set(deep))

    def is_watched_change(self, full: Path) -> bool:
        """Whether a change at ``full`` may concern memory (a file, or a folder that may hold some)."""
        if self._is_memory_path(full):
            return True
        return full == self.workspace / MEMORY_DIR or inside(str(self.workspace / MEMORY_DIR), str(full)) or any(inside(str(p), str(full)) for p in self.extra)
