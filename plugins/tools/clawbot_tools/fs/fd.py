"""Opening what was checked: no gap between resolving a path and opening it.

``paths.resolve`` checks a path's real path, but a directory on the way can be swapped for
a symlink before ``open`` runs. So reads open first and check after: the descriptor's own
path (``/proc/self/fd/N``) must lie inside the workspace; where there is no /proc, the
descriptor's device and inode must be those of the checked real path. Writes open their
directory one component at a time from the workspace root with ``O_NOFOLLOW`` and work
relative to that descriptor, so nothing is created or replaced through a swapped link.
"""

from __future__ import annotations

import os
import stat

from clawbot.workspacefiles import not_inside

from clawbot_tools.fs.paths import PathRefused

# O_NONBLOCK: a FIFO swapped in after the checks must not hang the open; regular files ignore it
READ_FLAGS = os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK
DIR_FLAGS = os.O_RDONLY | os.O_CLOEXEC | os.O_DIRECTORY


class TooLarge(Exception):
    """A file over the size a tool will load whole; ``args[0]`` is its size in bytes."""


def _swapped(path: str) -> PathRefused:
    return PathRefused(f"path {path!r} changed while it was being opened and now leads outside the workspace; nothing was read")


def check_opened(fd: int, path: str, root: str | None) -> None:
    """Raise :class:`PathRefused` unless the file open as ``fd`` lies inside ``root``
    (:func:`clawbot.workspacefiles.not_inside`, the check every workspace read uses)."""
    if root is not None and not_inside(fd, path, root) is not None:
        raise _swapped(path)


def open_read(path: str, root: str | None, *, follow: bool = False) -> int:
    """A read-only descriptor for ``path``, checked to lie inside ``root`` once open.

    ``follow=False`` refuses a symlink as the last component: resolved paths have none,
    so one there appeared after the check.
    """
    fd = os.open(path, READ_FLAGS | (0 if follow else os.O_NOFOLLOW))
    try:
        check_opened(fd, path, root)
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_limited(path: str, root: str | None, limit: int) -> bytes:
    """The whole of a regular file, or :class:`TooLarge` when it holds more than ``limit`` bytes."""
    with os.fdopen(open_read(path, root), "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise OSError(0, "not a regular file")
        if info.st_size > limit:
            raise TooLarge(info.st_size)
        data = handle.read(limit + 1)  # the file may have grown since fstat
    if len(data) > limit:
        raise TooLarge(len(data))
    return data


def open_dir(directory: str, root: str | None, *, create: bool) -> tuple[int, list[str]]:
    """A descriptor for the real directory path ``directory`` and the directories created.

    Each component is opened from the one before with ``O_NOFOLLOW`` (and made first when
    ``create``), starting at ``root`` (or '/' with confinement off): a component swapped
    for a symlink fails the open instead of leading elsewhere.
    """
    base = root if root is not None else "/"
    rel = os.path.relpath(directory, base)
    parts = [] if rel == "." else rel.split(os.sep)
    if ".." in parts:
        raise _swapped(directory)
    created: list[str] = []
    if create:
        os.makedirs(base, exist_ok=True)  # the workspace itself may not exist yet
    fd = os.open(base, DIR_FLAGS)
    try:
        for index, part in enumerate(parts):
            if create:
                try:
                    os.mkdir(part, 0o777, dir_fd=fd)
                    created.append(os.path.join(base, *parts[: index + 1]))
                except FileExistsError:
                    pass
            following = os.open(part, DIR_FLAGS | os.O_NOFOLLOW, dir_fd=fd)
            os.close(fd)
            fd = following
    except BaseException:
        os.close(fd)
        remove_dirs(created)
        raise
    return fd, created


def remove_dirs(created: list[str]) -> None:
    """Undo :func:`open_dir`'s creations, deepest first; a directory no longer empty stays."""
    for directory in reversed(created):
        try:
            os.rmdir(directory)
        except OSError:
            pass
