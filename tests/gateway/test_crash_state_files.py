"""The files that carry messages and runs across a crash are read as tolerantly as the session
files: whatever is wrong with one file or entry is reported once, naming the file, and the
good entries are kept; nothing raises."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import attrs
import pytest
from clawbot.gateway.inbox import Inbox, inbox_key
from clawbot.gateway.last_chats import LastChats
from clawbot.types import InboundMessage

GOOD = InboundMessage(channel="telegram", peer_id="42", text="hello", message_id="7", sender_id="42")
MESSAGE = {"channel": "telegram", "peer_id": "42", "text": "x", "chat_type": "direct", "account_id": "default"}

BAD_PAYLOADS = {
    "not JSON": b"{torn",
    "not UTF-8": b'{"message": "\xff"}',
    "a list": b"[1, 2]",
    "a number": b"7",
    "no message": b'{"session_key": "agent:main:main"}',
    "text of the wrong type": json.dumps({"session_key": "s", "message": {**MESSAGE, "text": 3}}).encode(),
    "a bad timestamp": json.dumps({"session_key": "s", "message": {**MESSAGE, "timestamp": "yesterday"}}).encode(),
    "attachments not a list": json.dumps({"session_key": "s", "message": {**MESSAGE, "attachments": "a"}}).encode(),
    "mentions of the wrong type": json.dumps({"session_key": "s", "message": {**MESSAGE, "mentions": [1]}}).encode(),
    "session key of the wrong type": json.dumps({"session_key": 5, "message": MESSAGE}).encode(),
}


def _warned(caplog: pytest.LogCaptureFixture, path: Path) -> bool:
    return any(str(path) in record.getMessage() and record.levelno == logging.WARNING for record in caplog.records)


@pytest.mark.parametrize("payload", list(BAD_PAYLOADS.values()), ids=list(BAD_PAYLOADS))
def test_a_bad_inbox_file_is_reported_and_the_others_are_still_answered(tmp_path: Path, payload: bytes, caplog) -> None:
    inbox = Inbox(tmp_path / "inbox")
    key = inbox_key("telegram", GOOD)
    inbox.add(key, GOOD, "agent:main:main")
    bad = tmp_path / "inbox" / "0bad.json"
    bad.write_bytes(payload)
    (pending,) = inbox.pending()
    assert (pending.key, pending.message, pending.started) == (key, GOOD, False)
    assert _warned(caplog, bad)
    inbox.prune()  # a bad file is left alone, not deleted
    assert bad.exists()


BAD_FILES = {name: BAD_PAYLOADS[name] for name in ("not JSON", "not UTF-8", "a list", "a number")}
BAD_MESSAGES = {
    "not an object": "x",
    "text of the wrong type": {**MESSAGE, "text": 3},
    "a bad timestamp": {**MESSAGE, "timestamp": "yesterday"},
    "attachments not a list": {**MESSAGE, "attachments": "a"},
    "mentions of the wrong type": {**MESSAGE, "mentions": [1]},
    "no peer": {k: v for k, v in MESSAGE.items() if k != "peer_id"},
}


@pytest.mark.parametrize("payload", list(BAD_FILES.values()), ids=list(BAD_FILES))
def test_an_unreadable_last_chats_file_is_reported_and_written_whole_again(tmp_path: Path, payload: bytes, caplog) -> None:
    path = tmp_path / "gateway" / "last-chats.json"
    path.parent.mkdir()
    path.write_bytes(payload)
    chats = LastChats(path)
    assert chats.get("agent:main:main") is None
    assert _warned(caplog, path)
    chats.remember("agent:main:main", GOOD)
    assert LastChats(path).get("agent:main:main") == attrs.evolve(GOOD, text="")  # what was written is kept out


@pytest.mark.parametrize("entry", list(BAD_MESSAGES.values()), ids=list(BAD_MESSAGES))
def test_a_bad_last_chats_entry_is_reported_and_the_good_ones_kept(tmp_path: Path, entry, caplog) -> None:
    path = tmp_path / "last-chats.json"
    path.write_text(json.dumps({"agent:main:main": MESSAGE, "agent:main:other": entry}))
    chats = LastChats(path)
    assert chats.get("agent:main:main") is not None and chats.get("agent:main:other") is None
    assert _warned(caplog, path)
