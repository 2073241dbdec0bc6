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
"""

from __future__ import annotations

import os
import stat

__all__ = ["FileRefused", "refusal"]


class FileRefused(OSError):
    """A file that is not loaded because it is not (only) inside the workspace.

    ``reason`` says why in a few words (shown in the prompt and by ``clawbot context``);
    ``detail`` adds what only the log should carry (where a link leads).
    """

    def __init__(self, path: os.PathLike[str] | str, reason: str, detail: str = "") -> None:
        super().__init__(f"{os.fspath(path)}: {reason}" + (f" ({detail})" if detail else ""))
        self.path = os.fspath(path)
        self.reason = reason
        self.detail = detail


OUTSIDE = "it leads outside the workspace (a symbolic link, or a folder on its path that is one)"
CHANGED = "it changed while it was being opened"


def _inside(root: str, path: str) -> bool:
    try:
        return os.path.commonpath([root, path]) == root
    except ValueError:
        return False


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
    opened = os.fstat(fd)
    actual = _opened_path(fd)
    if actual is not None:
        if not _inside(root, actual):
            return FileRefused(path, OUTSIDE, f"it is {actual}")
    else:  # no /proc: the checked real path must be the very file that is open
        real = os.path.realpath(path)
        try:
            named = os.stat(real)
        except OSError:
            return FileRefused(path, CHANGED)
        if not _inside(root, real):
            return FileRefused(path, OUTSIDE, f"it is {real}")
        if (named.st_dev, named.st_ino) != (opened.st_dev, opened.st_ino):
            return FileRefused(path, CHANGED)
    if stat.S_ISREG(opened.st_mode) and opened.st_nlink > 1:
        return FileRefused(
            path,
            f"it has {opened.st_nlink} hard links and another may be outside the workspace; "
            "replace it with a file of its own",
        )
    return None
