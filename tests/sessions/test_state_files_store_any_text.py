"""Every file clawbot writes model, tool or channel text into stores any Python string and
reads it back unchanged.

A lone surrogate (a model's ``"\\ud800"``, a file name, a channel's text) cannot be encoded
as UTF-8, and a write that raises loses the turn or the decision that made it. The table
runs the same awkward strings through each kernel writer: the transcript, the session
index, and the shared atomic JSON writer under both (approvals, auth health; the plugins'
own writers have their own tests).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from clawbot.sessions.store import SessionStore
from clawbot.statefile import atomic_write_json, json_text
from clawbot.testing import AWKWARD_TEXT
from clawbot.types import Message, Role, TextBlock, ThinkingBlock, ToolCallBlock, Usage

WEIRD = AWKWARD_TEXT
IDS = list(WEIRD)


@pytest.mark.parametrize("name", IDS)
def test_json_text_is_utf8_and_reads_back_exactly(name: str) -> None:
    value = {WEIRD[name]: [WEIRD[name], {"k": WEIRD[name]}]}
    text = json_text(value)
    text.encode("utf-8")  # never raises
    assert json.loads(text) == value


@pytest.mark.parametrize("name", IDS)
def test_the_transcript_stores_any_text(tmp_path: Path, name: str) -> None:
    weird = WEIRD[name]
    store = SessionStore(tmp_path)
    session = store.open("agent:main:main")
    written = [
        Message.user(weird),
        Message(
            Role.ASSISTANT,
            (ThinkingBlock(weird, signature=weird), TextBlock(weird), ToolCallBlock(weird, weird, {weird: weird}, weird)),
            provider=weird,
            model=weird,
            usage=Usage(1, 1),
        ),
        Message(Role.TOOL_RESULT, (TextBlock(weird),), tool_call_id=weird, tool_name=weird, is_error=True),
    ]
    for message in written:
        session.transcript.append_message(message)
    session.transcript.append("custom", kind=weird, detail={weird: weird})
    session.transcript.append("compaction", summary=weird)

    loaded = store.open("agent:main:main").transcript.load(whole=True)
    assert loaded.warnings == []
    assert [e.message for e in loaded.entries[:3]] == written
    assert loaded.entries[3].data == {"kind": weird, "detail": {weird: weird}}
    assert loaded.entries[4].data["summary"] == weird


@pytest.mark.parametrize("name", IDS)
def test_the_session_index_stores_any_text(tmp_path: Path, name: str) -> None:
    weird = f"w{WEIRD[name]}"  # an empty model name would mean "unchanged"
    store = SessionStore(tmp_path)
    key = f"agent:main:telegram:direct:{weird}"
    store.open(key)
    store.record_turn(key, usage=Usage(1, 1), model=weird, auth_profile=weird, thinking=weird)
    info = SessionStore(tmp_path).get(key)
    assert info is not None and (info.model, info.auth_profile, info.thinking) == (weird, weird, weird)


@pytest.mark.parametrize("name", IDS)
def test_atomic_json_files_store_any_text(tmp_path: Path, name: str) -> None:
    weird = WEIRD[name]
    path = tmp_path / "state.json"
    atomic_write_json(path, {"agents": {weird: {"commands": [{"command": weird, "env": {weird: weird}}]}}})
    assert json.loads(path.read_bytes().decode("utf-8")) == {"agents": {weird: {"commands": [{"command": weird, "env": {weird: weird}}]}}}
