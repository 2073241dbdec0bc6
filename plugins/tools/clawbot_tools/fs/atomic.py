"""Atomic file writes: a temp file beside the target, fsync, then a rename over it.

Everything happens relative to a descriptor of the target's directory opened by
:func:`fd.open_dir`, so the directory checked is the directory written.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from pathlib import Path

from clawbot_tools.fs.fd import open_dir, remove_dirs

DEFAULT_MODE = 0o644
# the kept mode drops setuid/setgid (and sticky): content the model wrote must not run with
# another user's or group's rights just because the file it replaced could
KEPT_MODE_BITS = 0o777
TEMP_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


def atomic_write(path: Path, data: bytes, *, root: str | None = None, create_dirs: bool = False, new_mode: int = DEFAULT_MODE) -> list[str]:
    """Replace ``path`` (a real path) with ``data`` all at once; returns the directories made.

    An existing regular file keeps its permission bits, less setuid/setgid; a new one gets
    ``new_mode`` less the umask. ``root`` is the
    directory the target must stay inside (``None``: anywhere). On any failure the original
    file is untouched, the temp file is removed and directories made for it are removed.
    """
    dir_fd, created = open_dir(os.fspath(path.parent), root, create=create_dirs)
    try:
        _write_in(dir_fd, path.name, data, new_mode & KEPT_MODE_BITS)
    except BaseException:
        os.close(dir_fd)
        remove_dirs(created)
        raise
    with contextlib.suppress(OSError):
        os.fsync(dir_fd)
    os.close(dir_fd)
    return created


def _existing_mode(dir_fd: int, name: str) -> int | None:
    try:
        info = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return None
    return stat.S_IMODE(info.st_mode) & KEPT_MODE_BITS if stat.S_ISREG(info.st_mode) else None


def _write_in(dir_fd: int, name: str, data: bytes, new_mode: int) -> None:
    mode = _existing_mode(dir_fd, name)
    # a new file's umask is applied by the kernel at create time (reading the umask with
    # os.umask would change it for every thread for a moment)
    temp_name, fd = _create_temp(dir_fd, name, new_mode if mode is None else mode)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            if mode is not None:
                os.fchmod(handle.fileno(), mode)
            os.fsync(handle.fileno())
        os.replace(temp_name, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp_name, dir_fd=dir_fd)
        raise


def _create_temp(dir_fd: int, name: str, mode: int) -> tuple[str, int]:
    for _ in range(100):
        temp_name = f".{name[:200]}.{secrets.token_hex(4)}.tmp"
        try:
            return temp_name, os.open(temp_name, TEMP_FLAGS, mode, dir_fd=dir_fd)
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temporary name beside {name}")
