"""The user message carries only the facts that matter for its chat, in a newest and an older form.

One table: for each kind of message (the owner in the terminal, a stranger's direct message,
a group message with a mention and a reply, clawbot's own event, another session's message)
the trusted fields, the untrusted fields, the body, and a ceiling on the bytes of the newest
form and of the form every later turn re-sends.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import pytest
from clawbot import InboundMessage
from clawbot.agent.inbound import (
    CONTEXT_LABEL,
    SESSION_MESSAGE_LABEL,
    SYSTEM_EVENT_LABEL,
    TRUSTED_HEADER,
    render_current,
    render_history,
    render_user_message,
    session_meta,
)
from clawbot.agent.user_turns import user_message

AT = datetime(2026, 6, 15, 14, 31, tzinfo=UTC)
TIME = "Mon 2026-06-15 14:31 UTC"
TEXT = "帮我写一个 Python 脚本,功能是遍历当前目录所有文件"

TERMINAL = InboundMessage(channel="terminal", peer_id="local", text=TEXT, sender_id="local", sender_name="you", message_id="t-3", timestamp=AT, from_owner=True)
STRANGER_DM = InboundMessage(
    channel="feishu",
    peer_id="ou_881e8247625e31527b4d15a31471504c",
    text=TEXT,
    sender_id="ou_881e8247625e31527b4d15a31471504c",
    sender_name="张三",
    message_id="om_6123456789abcdefghijklmnopqrstu",
    timestamp=AT,
)
GROUP = InboundMessage(
    channel="telegram",
    peer_id="-100123",
    account_id="work",
    text=TEXT,
    chat_type="group",
    sender_id="42",
    sender_name="Ann Lee",
    message_id="m9",
    reply_to_id="m8",
    thread_id="t1",
    mentioned=True,
    timestamp=AT,
)
EVENT = InboundMessage(channel="terminal", peer_id="local", text="exec 7 finished: exit code 0", system_event=True, timestamp=AT, from_owner=True)

# kind: (message, trusted fields, untrusted fields or None, body, newest bytes <, older bytes <)
CASES = {
    "owner in the terminal": (TERMINAL, {"channel": "terminal", "chat_type": "direct", "from_owner": True, "time": TIME}, None, TEXT, 360, 80),
    "stranger's direct message": (
        STRANGER_DM,
        {"channel": "feishu", "chat_type": "direct", "time": TIME},
        {"sender": "张三", "sender_id": "ou_881e8247625e31527b4d15a31471504c"},
        f"张三 (id ou_881e8247625e31527b4d15a31471504c): {TEXT}",
        510,
        130,
    ),
    "group with a mention and a reply": (
        GROUP,
        {"channel": "telegram", "account": "work", "chat_type": "group", "time": TIME},
        {"sender": "Ann Lee", "sender_id": "42", "chat_id": "-100123", "message_id": "m9", "reply_to_id": "m8", "thread_id": "t1", "was_mentioned": True},
        f'"Ann Lee" (id 42): {TEXT}',
        580,
        100,
    ),
    "system event": (
        EVENT,
        {"channel": "terminal", "chat_type": "direct", "system_event": True, "time": TIME},
        None,
        f"{SYSTEM_EVENT_LABEL}\n  exec 7 finished: exit code 0",
        380,
        90,
    ),
}


def _json_blocks(text: str) -> list[dict]:
    return [json.loads(block) for block in re.findall(r"```json\n(.*?)\n```", text, re.DOTALL)]


def _utf8(text: str) -> int:
    return len(text.encode())


@pytest.mark.parametrize("kind", CASES)
def test_each_chat_type_carries_only_the_fields_that_matter(kind: str) -> None:
    origin, trusted, context, body, newest_max, older_max = CASES[kind]
    stored = user_message(origin.text, origin, zone=ZoneInfo("UTC"))
    assert stored.text == origin.text  # the transcript keeps what was written, as written
    newest = render_current(stored.text, stored.meta)
    blocks = _json_blocks(newest)
    assert newest.startswith(TRUSTED_HEADER + "\n") and blocks[0] == trusted
    assert blocks[1:] == ([context] if context else [])
    assert (CONTEXT_LABEL in newest) == bool(context)
    assert newest.endswith("\n\n" + body)
    older = render_history(stored.text, stored.meta)
    assert older == body and TRUSTED_HEADER not in older
    assert _utf8(newest) < newest_max and _utf8(older) < older_max, (_utf8(newest), _utf8(older))
    for absent in ("is_group_chat", 'was_mentioned": false', 'system_event": false', "schema", "[message_id:"):
        assert absent not in newest


def test_a_session_message_names_its_sender_in_both_forms() -> None:
    meta = session_meta(from_session="agent:main:main", from_agent="main")
    newest, older = render_current("summarise it", meta), render_history("summarise it", meta)
    assert _json_blocks(newest) == [{"channel": "agent", "chat_type": "session", "from_session": "agent:main:main", "from_agent": "main"}]
    assert older == f'{SESSION_MESSAGE_LABEL}\nfrom: "agent:main:main"\n  summarise it'
    assert newest.endswith("\n\n" + older) and _utf8(older) < 220


def test_the_owner_named_in_config_is_the_owner_too() -> None:
    stranger = user_message(STRANGER_DM.text, STRANGER_DM, owner_ids=["feishu:ou_881e8247625e31527b4d15a31471504c"])
    assert stranger.meta["from_owner"] is True and "sender" not in stranger.meta
    assert render_history(stranger.text, stranger.meta) == TEXT


def test_the_time_is_shown_in_the_users_zone_and_only_while_the_message_is_newest() -> None:
    text = render_user_message("hi", STRANGER_DM, zone=ZoneInfo("Asia/Shanghai"))
    assert _json_blocks(text)[0]["time"] == "Mon 2026-06-15 22:31 CST"
    stored = user_message("hi", STRANGER_DM, zone=ZoneInfo("Asia/Shanghai"))
    assert "CST" not in render_history(stored.text, stored.meta)


def test_a_cli_turn_is_the_text_alone() -> None:
    assert render_user_message("hello", None) == "hello"
    assert user_message("hello", None).meta is None
