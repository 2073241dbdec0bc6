"""One gateway per state dir.

Two ``clawbot run`` on the same state dir would answer the same chats twice (two Telegram
pollers fight over updates), and the second one's control API would hide the first: the
endpoint file names only one of them. ``clawbot run`` therefore holds an exclusive lock on
``<state>/gateway/run.lock`` for its whole life; a second one is refused, naming the first.
The lock is the kernel's ``flock``, released by the system when the process ends however it
ends, so a crashed gateway never leaves a stale lock behind.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

from clawbot.control.endpoint import live_endpoint
from clawbot.statefile import make_private_dir


class GatewayRunning(Exception):
    """Another gateway holds the state dir; the message says which and what to do."""


@contextlib.contextmanager
def only_gateway(state_root: Path) -> Iterator[None]:
    """Hold the state dir's gateway lock while the block runs; :class:`GatewayRunning` when
    another process holds it."""
    try:
        import fcntl
    except ImportError:  # no flock (Windows): one gateway per state dir is then up to the user
        yield
        return

    folder = state_root / "gateway"
    make_private_dir(folder)
    fd = os.open(folder / "run.lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise GatewayRunning(_running_message(state_root)) from None
        # named for `clawbot status` and `clawbot agent`, which find no endpoint without the control API
        os.ftruncate(fd, 0)
        os.write(fd, str(os.getpid()).encode())
        yield
    finally:
        os.close(fd)


def _running_message(state_root: Path) -> str:
    endpoint = live_endpoint(state_root)
    which = f" (pid {endpoint['pid']}, http://{endpoint['host']}:{endpoint['port']})" if endpoint else ""
    return (
        f"A clawbot gateway already runs on {state_root}{which}: `clawbot status` shows it. "
        "Stop it first (`clawbot gateway uninstall` if it runs as a service), or give this one another CLAWBOT_HOME."
    )


def gateway_holder(state_root: Path) -> int | None:
    """The pid of the gateway holding ``state_root``'s lock, or ``None`` when none runs."""
    try:
        import fcntl
    except ImportError:
        return None
    path = state_root / "gateway" / "run.lock"
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            text = path.read_text(encoding="utf-8").strip()
            return int(text) if text.isdigit() else 0
        return None
    finally:
        os.close(fd)
