"""What an agent can leave at a name in its workspace instead of a plain file, for the tests
of everything that reads one.

The agent (and whoever talks to it) can write the workspace, so a file clawbot reads on its
own behalf may be any of :data:`HOSTILE_KINDS`. :func:`plant_hostile` puts one at a path;
:func:`call_in_thread` runs a reader in a thread of its own and fails the test when the
reader does not return in time (a read stuck on a FIFO), instead of hanging the suite.
"""

from __future__ import annotations

import os
import socket
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")

HOSTILE_SECRET = "sk-hostile-HOSTILE_SECRET-0451"
"""The text of the file outside the workspace that links point to: it must never be read."""

HOSTILE_KINDS = (
    "fifo",
    "socket",
    "link-to-dev-null",
    "link-to-dev-zero",
    "link-out",
    "huge",
    "folder",
    "not-utf8",
)
"""Each a reader must refuse or skip without blocking, reading outside the workspace or
holding the whole file in memory (``huge`` is a sparse file of :data:`HUGE_BYTES`)."""

HUGE_BYTES = 4 * 1024**3


def secret_outside(folder: Path) -> Path:
    """A file outside the workspace holding :data:`HOSTILE_SECRET` (``folder`` must be outside)."""
    folder.mkdir(parents=True, exist_ok=True)
    secret = folder / "secret.md"
    secret.write_text(f"- {HOSTILE_SECRET}\n", encoding="utf-8")
    return secret


def plant_hostile(kind: str, target: Path, outside: Path) -> None:
    """Put ``kind`` (one of :data:`HOSTILE_KINDS`) at ``target``; ``outside`` is a file
    outside the workspace (:func:`secret_outside`)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    if kind == "fifo":
        os.mkfifo(target)
    elif kind == "socket":
        _bind_socket(target)
    elif kind == "link-to-dev-null":
        target.symlink_to("/dev/null")
    elif kind == "link-to-dev-zero":
        target.symlink_to("/dev/zero")
    elif kind == "link-out":
        target.symlink_to(outside)
    elif kind == "huge":
        with open(target, "wb") as handle:
            handle.truncate(HUGE_BYTES)  # sparse: costs no disk, reads as zeros
    elif kind == "folder":
        target.mkdir()
    elif kind == "not-utf8":
        target.write_bytes(b"- check \xff\xfe the \xc3 inbox\n")
    else:
        raise ValueError(f"unknown hostile kind {kind!r}; one of {', '.join(HOSTILE_KINDS)}")


def _bind_socket(target: Path) -> None:
    """A listening Unix socket at ``target`` (bound by a short relative name: a socket's
    path is limited to about 100 bytes and a test's folder is often longer)."""
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    here = os.getcwd()
    os.chdir(target.parent)
    try:
        server.bind(target.name)
    finally:
        os.chdir(here)
    server.close()  # the socket file stays: what a reader meets is the name


def call_in_thread(call: Callable[[], T], *, timeout: float = 30.0, fifos: tuple[Path, ...] = ()) -> T:
    """``call()`` in a thread of its own: its result, or its exception re-raised.

    Fails with ``AssertionError`` when it has not returned after ``timeout`` seconds; then
    each of ``fifos`` is opened for writing once, so a reader stuck on one gets its end of
    file and the thread ends with the test.
    """
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["result"] = call()
        except BaseException as exc:  # handed to the test's thread
            outcome["error"] = exc

    thread = threading.Thread(target=run, name="reader-under-test", daemon=True)
    thread.start()
    thread.join(timeout)
    if thread.is_alive():
        for fifo in fifos:
            try:
                os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
            except OSError:
                pass
        raise AssertionError(f"the reader did not return within {timeout:.0f} s: it blocked on what it was reading")
    if "error" in outcome:
        raise outcome["error"]
    return outcome["result"]
