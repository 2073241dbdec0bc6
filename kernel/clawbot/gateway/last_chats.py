"""The chat a person last wrote to each session from, kept across restarts.

A heartbeat's reply (``heartbeat.target = "last"``) goes there. Kept in memory only, a
restart left the next heartbeat with no chat until someone wrote again, and its reply went
nowhere. So the gateway keeps ``<state>/gateway/last-chats.json`` (private), written only
when a session's chat changes (not on every message). A file that cannot be read, or an
entry of the wrong shape, is reported once and left out: the session's next message
records its chat again.
"""

from __future__ import annotations

import logging
from pathlib import Path

import attrs

from clawbot.statefile import atomic_write_json, make_private_dir, read_state, report_once
from clawbot.types import InboundMessage

log = logging.getLogger(__name__)

UNREADABLE = "ignored: a heartbeat reaches a session's chat again once someone writes there"


def _chat(message: InboundMessage) -> tuple[str | None, ...]:
    """What makes two messages the same chat: a reply to either reaches the same place."""
    return (message.channel, message.account_id, message.peer_id, message.thread_id, message.chat_type)


@attrs.define
class LastChats:
    path: Path
    _chats: dict[str, InboundMessage] | None = None

    def _loaded(self) -> dict[str, InboundMessage]:
        if self._chats is None:
            self._chats = {}
            data = read_state(self.path, UNREADABLE)
            if data is not None and not isinstance(data, dict):
                report_once(self.path, f"is not a JSON object; {UNREADABLE}")
                data = None
            for session_key, value in (data or {}).items():
                try:
                    self._chats[session_key] = InboundMessage.from_json(value)
                except (ValueError, TypeError) as exc:
                    report_once(self.path, f"the entry of {session_key[:80]!r} is not a message ({exc}); {UNREADABLE}")
        return self._chats

    def get(self, session_key: str) -> InboundMessage | None:
        """The last message a person wrote in ``session_key`` (before a restart too)."""
        return self._loaded().get(session_key)

    def remember(self, session_key: str, message: InboundMessage) -> None:
        chats = self._loaded()
        known = chats.get(session_key)
        chats[session_key] = message
        if known is not None and _chat(known) == _chat(message):
            return  # the same chat: nothing a restart would miss
        # only what a reply needs: never the text or the files someone sent
        kept = {key: attrs.evolve(value, text="", attachments=(), mentions=()).as_json() for key, value in chats.items()}
        try:
            make_private_dir(self.path.parent)
            atomic_write_json(self.path, kept)
        except OSError as exc:
            log.warning("%s could not be written (%s): after a restart heartbeats go nowhere until someone writes", self.path, exc)
