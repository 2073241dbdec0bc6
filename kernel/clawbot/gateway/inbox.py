"""The gateway's durable inbox: a message it accepted survives a crash until it is answered.

A channel hands a message over (``await sink(message)``) and only then confirms it to its
network (Telegram's update offset); from that moment the gateway is responsible for it. So
before the sink returns, the message is written here, one small private file per message,
fsynced; when its turn starts the file says so; when the message is answered (or dropped,
or its sender told clawbot stopped) the file becomes a done marker. A gateway killed in
between (SIGKILL, out of memory, power loss) finds the file at its next start
(:meth:`Inbox.pending`): a message whose turn never started is answered then; one whose turn
started but did not finish is not run again (the model may have sent mail or run a command
already), its sender is told in one line instead.

Done markers stay for :data:`KEEP_DONE_S`, so a network that delivers a message again (the
offset was not confirmed before the crash) gets it answered once: :meth:`Inbox.seen`.

A file that cannot be read (a torn write, an edit by hand) is reported once and left alone;
the others are still answered.
"""

from __future__ import annotations

import hashlib
import logging
import os
import time
import uuid
from pathlib import Path
from typing import Any

import attrs

from clawbot.statefile import json_text, make_private_dir, read_state, replace_file, report_once
from clawbot.types import InboundMessage

log = logging.getLogger(__name__)

#: how long a done marker is kept: a message delivered again within it is not answered again
#: (Telegram keeps an unconfirmed update for 24 hours)
KEEP_DONE_S = 24 * 3600.0
SUFFIX = ".json"
UNREADABLE = "left alone: the message it holds is neither answered nor dropped"


@attrs.frozen
class Pending:
    """A message the last gateway accepted and did not answer."""

    key: str
    message: InboundMessage
    session_key: str
    started: bool
    """Its turn had started (the model may have acted on it): its sender is told, not answered again."""


def inbox_key(channel: str, message: InboundMessage) -> str:
    """The file name of ``message``: the network's own message id when it has one (so a
    redelivery is recognised), else a fresh one."""
    if message.message_id is None:
        return uuid.uuid4().hex
    identity = "\0".join((channel, message.account_id, message.peer_id, message.thread_id or "", message.message_id, message.text))
    return hashlib.sha256(identity.encode("utf-8", "surrogatepass")).hexdigest()[:32]


@attrs.define
class Inbox:
    directory: Path

    def _path(self, key: str) -> Path:
        return self.directory / f"{key}{SUFFIX}"

    def _write(self, key: str, data: dict[str, Any]) -> None:
        make_private_dir(self.directory)
        replace_file(self._path(key), json_text(data, separators=(",", ":")).encode("utf-8"), durable=True)
        self._sync_directory()

    def _sync_directory(self) -> None:
        """The rename itself reaches the disk only with the directory's own fsync."""
        try:
            fd = os.open(self.directory, os.O_RDONLY)
        except OSError:
            return
        try:
            os.fsync(fd)
        except OSError:
            pass
        finally:
            os.close(fd)

    def seen(self, key: str) -> bool:
        """Whether ``key`` was accepted already (waiting, running or answered lately)."""
        return self._path(key).exists()

    def add(self, key: str, message: InboundMessage, session_key: str) -> None:
        self._write(key, {"session_key": session_key, "started": False, "message": message.as_json()})

    def start(self, key: str, message: InboundMessage, session_key: str) -> None:
        self._write(key, {"session_key": session_key, "started": True, "message": message.as_json()})

    def finish(self, key: str) -> None:
        self._write(key, {"done": time.time()})

    def pending(self) -> list[Pending]:
        """The messages accepted and not answered, oldest first."""
        found: list[tuple[float, Pending]] = []
        for path in self._files():
            data = read_state(path, UNREADABLE)
            if data is not None and not isinstance(data, dict):
                report_once(path, f"is not a JSON object; {UNREADABLE}")
            if not isinstance(data, dict) or "done" in data:
                continue
            try:
                message = InboundMessage.from_json(data.get("message"))
                session_key = data.get("session_key")
                if not isinstance(session_key, str) or not session_key:
                    raise ValueError("session_key is not a string")
            except (ValueError, TypeError) as exc:
                report_once(path, f"not a message clawbot can read ({exc}): left alone")
                continue
            found.append((path.stat().st_mtime, Pending(path.name.removesuffix(SUFFIX), message, session_key, data.get("started") is True)))
        return [pending for _, pending in sorted(found, key=lambda item: item[0])]

    def prune(self, now: float | None = None) -> None:
        """Forget the done markers older than :data:`KEEP_DONE_S`."""
        now = time.time() if now is None else now
        for path in self._files():
            data = read_state(path, UNREADABLE)
            done = data.get("done") if isinstance(data, dict) else None
            if isinstance(done, (int, float)) and now - done > KEEP_DONE_S:
                path.unlink(missing_ok=True)

    def _files(self) -> list[Path]:
        try:
            return [path for path in self.directory.iterdir() if path.name.endswith(SUFFIX) and not path.name.startswith(".")]
        except FileNotFoundError:
            return []
