"""Several file changes that all happen or none do.

Each step records how to undo itself: a written file is restored from its old bytes (or
removed, with the directories made for it), a removed file is renamed aside to a hidden
backup beside it and renamed back. ``rollback`` undoes the steps in reverse; ``commit``
drops the backups.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import Callable
from pathlib import Path

from clawbot_tools.fs.atomic import DEFAULT_MODE, atomic_write
from clawbot_tools.fs.fd import open_dir, remove_dirs


class FileTransaction:
    def __init__(self, root: str | None) -> None:
        self.root = root
        self._undo: list[tuple[str, Callable[[], None]]] = []
        self._backups: list[tuple[int, str]] = []  # (directory descriptor, backup name)

    def write(self, path: Path, data: bytes, old: bytes | None, *, new_mode: int = DEFAULT_MODE) -> None:
        """Write ``path``; ``old`` is its current content, ``None`` when it does not exist."""
        created = atomic_write(path, data, root=self.root, create_dirs=old is None, new_mode=new_mode)
        if old is None:
            self._undo.append((str(path), lambda: _remove_new(path, created)))
        else:
            self._undo.append((str(path), lambda: atomic_write(path, old, root=self.root)))

    def remove(self, path: Path) -> None:
        dir_fd, _ = open_dir(os.fspath(path.parent), self.root, create=False)
        try:
            backup = f".{path.name[:200]}.{secrets.token_hex(4)}.patch-backup"
            os.rename(path.name, backup, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        except BaseException:
            os.close(dir_fd)
            raise
        self._backups.append((dir_fd, backup))
        self._undo.append((str(path), lambda: os.rename(backup, path.name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)))

    def rollback(self) -> list[str]:
        """Undo every step, newest first; returns the paths that could not be restored."""
        failed: list[str] = []
        for path, undo in reversed(self._undo):
            try:
                undo()
            except Exception:  # keep undoing the others
                failed.append(path)
        self._undo.clear()
        self._close()
        return failed

    def commit(self) -> None:
        for dir_fd, backup in self._backups:
            with contextlib.suppress(OSError):
                os.unlink(backup, dir_fd=dir_fd)
        self._undo.clear()
        self._close()

    def _close(self) -> None:
        for dir_fd, _ in self._backups:
            with contextlib.suppress(OSError):
                os.close(dir_fd)
        self._backups.clear()


def _remove_new(path: Path, created: list[str]) -> None:
    os.unlink(path)
    remove_dirs(created)
