"""``clawbot.promptkit.speaker``: who wrote a stored user message, for plugins that retell it.

Built from messages as the kernel stores them (a chat's facts in ``meta``), a transcript
written before the facts were kept apart, and a CLI turn; only the owner is the owner.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from clawbot import InboundMessage
from clawbot.agent.user_turns import session_message, user_message
from clawbot.promptkit import Speaker, speaker
from clawbot.types import Message

LEGACY = json.loads((Path(__file__).parents[1] / "e2e" / "legacy_user_messages.json").read_text(encoding="utf-8"))
GROUP = InboundMessage(channel="telegram", peer_id="g1", text="", chat_type="group", sender_id="667", sender_name="Alice")
DIRECT = InboundMessage(channel="telegram", peer_id="667", text="", chat_type="direct", sender_id="667", sender_name="Mallory")

CASES = {
    "owner in a group": (user_message("go", GROUP, owner_ids=["telegram:667"]), Speaker("owner", "go", "Alice", "667", "group")),
    "namesake in a group": (user_message("go", GROUP), Speaker("other", "go", "Alice", "667", "group")),
    "owner's direct message": (user_message("go", DIRECT, owner_ids=["telegram:667"]), Speaker("owner", "go", None, None, "direct")),
    "stranger's direct message": (user_message("go", DIRECT), Speaker("other", "go", "Mallory", "667", "direct")),
    "system event": (
        user_message("done", InboundMessage(channel="terminal", peer_id="local", text="", system_event=True)),
        Speaker("event", "done", chat_type="direct"),
    ),
    "another session": (
        session_message("sum it up", from_session="agent:main:x", from_agent="main"),
        Speaker("session", "sum it up", chat_type="session", session="agent:main:x"),
    ),
    "CLI turn": (Message.user("hello"), Speaker("owner", "hello")),
    "old group envelope": (Message.user(LEGACY["group"]), Speaker("other", LEGACY["group"].rsplit('"Eve Q": ', 1)[1], "Eve Q", "42", "group")),
    "old session envelope": (Message.user(LEGACY["session"]), Speaker("session", "please summarise", chat_type="session", session="agent:main:work")),
}


@pytest.mark.parametrize(("message", "expected"), CASES.values(), ids=CASES.keys())
def test_speaker_says_who_wrote_a_stored_message(message: Message, expected: Speaker) -> None:
    assert speaker(message) == expected
