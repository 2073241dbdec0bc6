"""Opening a workspace file for the system prompt only if it really is inside the workspace.

The bootstrap files (AGENTS.md, SOUL.md, USER.md ...) go into every system prompt without
anyone asking, so a planted ``AGENTS.md -> ~/.clawbot/credentials/anthropic.json`` would
send the key to the provider, and in a group to everyone who can talk to the model. The
rule is the ``read`` tool's, checked on the file that was actually opened rather than on
the path before opening, so a link swapped in between cannot win:

* the opened file's own path (``/proc/self/fd/N``) must lie inside the workspace's real
  path; without /proc, the path's real path must lie inside it *and* name the very file
  that is open (same device and inode);
* a regular file with more than one hard link is refused too. Unlike the ``read`` tool,
  which allows them because package managers fill a workspace with hard links
  (``.venv``, ``node_modules``), a bootstrap file is loaded unasked into every prompt,
  nothing legitimate needs one to be a hard link, and a hard link to a secret (the same
  user may link their own files) cannot be told apart from the secret by its path.

:func:`open_confined` is the one way the kernel opens a workspace file it reads on its own
behalf (to put it into a prompt, to hash it or to show it in a notice). It also refuses
anything but a regular file, and checks the real path before opening too, so a link to a
device or a FIFO outside is never even opened in the common case.
"""

from __future__ import annotations

import os
import stat

from clawbot.paths import inside

__all__ = ["FileRefused", "LeadsOutside", "NotRegularFile", "inside", "not_inside", "open_confined", "refusal"]

OUTSIDE = "it leads outside the workspace (a symbolic link, or a folder on its path that is one)"
OUTSIDE_SUMMARY = "leads outside the workspace"


class FileRefused(OSError):
    """A file that is not loaded because it is not (only) inside the workspace.

    ``reason`` says why in a few words (shown in the prompt and by ``clawbot context``);
    ``detail`` adds what only the log should carry (where a link leads);
    ``summary`` is the same in a few words for a one-line notice ("leads outside the workspace").
    """

    def __init__(self, path: os.PathLike[str] | str, reason: str, detail: str = "", summary: str = "") -> None:
        super().__init__(f"{os.fspath(path)}: {reason}" + (f" ({detail})" if detail else ""))
        self.path = os.fspath(path)
        self.reason = reason
        self.detail = detail
        self.summary = summary or reason


class LeadsOutside(FileRefused):
    """A file whose real path (or the file actually opened) lies outside the workspace."""

    def __init__(self, path: os.PathLike[str] | str, detail: str = "") -> None:
        super().__init__(path, OUTSIDE, detail, OUTSIDE_SUMMARY)


class NotRegularFile(OSError):
    """Something that exists but is not a regular file (a directory, a FIFO, a device)."""


CHANGED = "it changed while it was being opened"
CHANGED_SUMMARY = "changed while it was being opened"
READ_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0)
"""Opening never blocks (a FIFO) and never makes a terminal clawbot's own."""


def _opened_path(fd: int) -> str | None:
    try:
        target = os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return None
    return target.removesuffix(" (deleted)") if target.startswith("/") else None


def refusal(fd: int, path: os.PathLike[str] | str, root: str) -> FileRefused | None:
    """Why the file open as ``fd`` (opened through ``path``) may not be loaded, or ``None``.

    ``root`` is the workspace's real path (``os.path.realpath``).
    """
    refused = not_inside(fd, path, root)
    if refused is not None:
        return refused
    opened = os.fstat(fd)
    if stat.S_ISREG(opened.st_mode) and opened.st_nlink > 1:
        return FileRefused(
            path,
            f"it has {opened.st_nlink} hard links and another may be outside the workspace; replace it with a file of its own",
            summary=f"has {opened.st_nlink} hard links, so it may be a file outside the workspace",
        )
    return None


def not_inside(fd: int, path: os.PathLike[str] | str, root: str) -> FileRefused | None:
    """Why the file open as ``fd`` (opened through ``path``) does not lie inside ``root`` (a
    real path), or ``None``: the check on the file actually opened, without the hard-link
    rule (the file tools allow hard links)."""
    actual = _opened_path(fd)
    if actual is not None:
        if not inside(root, actual):
            return LeadsOutside(path, f"it is {actual}")
    else:  # no /proc: the checked real path must be the very file that is open
        real = os.path.realpath(path)
        try:
            named = os.stat(real)
        except OSError:
            return FileRefused(path, CHANGED, summary=CHANGED_SUMMARY)
        if not inside(root, real):
            return LeadsOutside(path, f"it is {real}")
        opened = os.fstat(fd)
        if (named.st_dev, named.st_ino) != (opened.st_dev, opened.st_ino):
            return FileRefused(path, CHANGED, summary=CHANGED_SUMMARY)
    return None


def open_confined(path: os.PathLike[str] | str, root: os.PathLike[str] | str) -> int:
    """A descriptor of ``path`` open for reading, if it is a regular file really inside ``root``.

    Raises :class:`FileNotFoundError` (or ``NotADirectoryError``) when there is nothing there,
    :class:`FileRefused` when it leads outside ``root`` or has another hard link, and
    :class:`NotRegularFile` for a directory, a FIFO or a device inside ``root``.
    """
    root = os.path.realpath(root)
    real = os.path.realpath(path)
    if not inside(root, real):  # a link to a device outside is not opened at all
        raise LeadsOutside(path, f"it is {real}")
    fd = os.open(path, READ_FLAGS)
    try:
        refused = refusal(fd, path, root)  # on the file actually opened: a swapped-in link loses
        if refused is not None:
            raise refused
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise NotRegularFile(f"{os.fspath(path)} is not a regular file")
    except BaseException:
        os.close(fd)
        raise
    return fd
