"""Reading a file of an agent's workspace on clawbot's own behalf, the one safe way.

The workspace is writable by the agent, so by whoever can talk to it: any name there may be
a link out of it (to a key file, to ``/dev/zero``), a FIFO that never delivers a byte, a
socket, a folder or a file of gigabytes. Every file clawbot reads unasked (the bootstrap
files, HEARTBEAT.md, SKILL.md, memory, extra bootstrap files, what ``clawbot context``
shows) is read here, and so is every such file a plugin reads:

* **confined**: the file actually opened must lie inside ``root`` and have no other hard link,
  checked on the open descriptor, so a link swapped in between a check and the open cannot
  win (:func:`clawbot.confined.open_confined`);
* **regular files only**, opened non-blocking: a FIFO never stalls the open, and a FIFO, a
  socket, a device or a folder is refused before a byte is read;
* **size-capped**: at most ``max_bytes + 1`` bytes are read; a larger file is refused;
* **never on the event loop**: a coroutine awaits :func:`read_text_in_thread` (or calls
  :func:`read_file` through ``asyncio.to_thread``), so a slow disk stalls one read, not every
  chat.

Whatever cannot be read the safe way raises :class:`FileRefused`, an ``OSError`` whose
``reason`` says why in a few words (``it is not a regular file (a FIFO)``, ``it is larger
than 262144 bytes``), for the caller to log once and carry on as if the file were absent.
A missing file is no error: the readers return ``None``. :func:`not_inside` is the check on
an open descriptor alone, for a reader with rules of its own (the file tools, which allow
hard links).
"""

from __future__ import annotations

import asyncio
import errno
import os
import stat

from clawbot.confined import READ_FLAGS, FileRefused, LeadsOutside, NotRegularFile, not_inside, open_confined

__all__ = ["FileRefused", "LeadsOutside", "NotRegular", "TooLarge", "Unreadable", "not_inside", "open_file", "read_file", "read_text", "read_text_in_thread"]

_KINDS = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a device"),
    (stat.S_ISBLK, "a device"),
)


class NotRegular(FileRefused):
    """A folder, FIFO, socket or device where a file was expected."""


class TooLarge(FileRefused):
    """A file holding more than the reader's cap; ``limit`` is the cap in bytes."""

    def __init__(self, path: os.PathLike[str] | str, limit: int) -> None:
        super().__init__(path, f"it is larger than {limit} bytes", summary=f"is larger than {limit} bytes")
        self.limit = limit


class Unreadable(FileRefused):
    """A file clawbot may not read (permissions) or that is not text where text is needed."""


def _kind(path: os.PathLike[str] | str) -> str:
    """What ``path`` is instead of a regular file, for the message only (the refusal itself
    was decided on the open descriptor, or by the open failing)."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return "not a regular file"
    return next((f"not a regular file ({what})" for test, what in _KINDS if test(mode)), "not a regular file")


def _not_regular(path: os.PathLike[str] | str) -> NotRegular:
    kind = _kind(path)
    return NotRegular(path, f"it is {kind}", summary=f"is {kind}")


def open_file(path: os.PathLike[str] | str, root: os.PathLike[str] | str | None) -> int:
    """A descriptor of the regular file ``path`` inside ``root``, open for reading.

    Raises :class:`FileNotFoundError` (or ``NotADirectoryError``) when there is nothing there
    and :class:`FileRefused` for anything that may not be read: :class:`LeadsOutside`
    ``root`` (a link, or a folder on the way that is one), another hard link, swapped while
    opening, :class:`NotRegular`, :class:`Unreadable`. ``root=None`` is for a folder the user
    keeps, not the agent (bundled or the user's own skills): no confinement, but still a
    regular file only, opened without blocking.
    """
    try:
        if root is not None:
            return open_confined(path, root)
        fd = os.open(path, READ_FLAGS)
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise NotRegularFile(f"{os.fspath(path)} is not a regular file")
        except BaseException:
            os.close(fd)
            raise
        return fd
    except (FileNotFoundError, NotADirectoryError, FileRefused):
        raise
    except NotRegularFile:
        raise _not_regular(path) from None
    except OSError as exc:
        if exc.errno in (errno.ENXIO, errno.EOPNOTSUPP, errno.ENODEV):  # a socket or a device cannot even be opened
            raise _not_regular(path) from None
        raise Unreadable(path, f"it cannot be read ({exc.strerror or exc})", summary="cannot be read") from None


def read_file(path: os.PathLike[str] | str, root: os.PathLike[str] | str | None, *, max_bytes: int) -> bytes | None:
    """The bytes of the regular file ``path`` inside ``root``; ``None`` when there is none.

    Raises :class:`FileRefused` (see :func:`open_file`), :class:`TooLarge` when the file holds
    more than ``max_bytes`` bytes (only ``max_bytes + 1`` are ever read). Blocking: from a
    coroutine, use :func:`read_text_in_thread` or ``asyncio.to_thread``.
    """
    try:
        fd = open_file(path, root)
    except (FileNotFoundError, NotADirectoryError):
        return None
    try:
        with os.fdopen(fd, "rb") as handle:
            data = handle.read(max_bytes + 1)
    except OSError as exc:  # an I/O error of the disk, a file system that refuses reads
        raise Unreadable(path, f"it cannot be read ({exc.strerror or exc})", summary="cannot be read") from None
    if len(data) > max_bytes:
        raise TooLarge(path, max_bytes)
    return data


def read_text(path: os.PathLike[str] | str, root: os.PathLike[str] | str | None, *, max_bytes: int) -> str | None:
    """:func:`read_file` as UTF-8 text; a file that is not UTF-8 raises :class:`Unreadable`."""
    data = read_file(path, root, max_bytes=max_bytes)
    if data is None:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise Unreadable(path, f"it is not UTF-8 text (byte {exc.start})", summary="is not UTF-8 text") from None


async def read_text_in_thread(path: os.PathLike[str] | str, root: os.PathLike[str] | str, *, max_bytes: int) -> str | None:
    """:func:`read_text` in a worker thread, for a coroutine: the event loop never waits on a file."""
    return await asyncio.to_thread(read_text, path, root, max_bytes=max_bytes)
