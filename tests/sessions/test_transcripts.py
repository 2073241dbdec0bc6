"""Transcripts survive crashes: torn lines are skipped, dangling tool calls are answered."""

from __future__ import annotations

import json
from pathlib import Path

from clawbot.sessions.store import SessionStore
from clawbot.sessions.transcript import INTERRUPTED, repair_tool_calls
from clawbot.types import Message, Role, StopReason, TextBlock, ThinkingBlock, ToolCallBlock, Usage


def _assistant_calling(*calls: tuple[str, str]) -> Message:
    blocks = tuple(ToolCallBlock(id=i, name=n, arguments={"path": "a.txt"}) for i, n in calls)
    return Message(
        Role.ASSISTANT, (ThinkingBlock("plan", signature="sig"), *blocks), provider="p", model="m", usage=Usage(10, 5, 3, 1), stop_reason=StopReason.TOOL_USE
    )


def _result(call_id: str, text: str = "ok") -> Message:
    return Message(Role.TOOL_RESULT, (TextBlock(text),), tool_call_id=call_id, tool_name="read")


def test_messages_round_trip_through_the_file(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    session = store.open("agent:main:main")
    written = [Message.user("hi"), _assistant_calling(("c1", "read")), _result("c1"), Message.assistant("done")]
    for message in written:
        session.transcript.append_message(message)
    loaded = store.open("agent:main:main").transcript.load()
    assert loaded.messages() == written and loaded.warnings == []
    assert loaded.header["key"] == "agent:main:main" and loaded.header["type"] == "session"
    ids = [e.id for e in loaded.entries]
    assert [e.parent_id for e in loaded.entries] == [None, *ids[:-1]]
    assert (session.transcript.path.stat().st_mode & 0o777) == 0o600


def test_a_torn_last_line_is_skipped_and_the_next_entry_lands_on_its_own_line(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    session = store.open("agent:main:main")
    session.transcript.append_message(Message.user("first"))
    with session.transcript.path.open("a") as handle:
        handle.write('{"type": "message", "id": "x", "message": {"role": "assis')  # killed mid-write
    reopened = store.open("agent:main:main")
    loaded = reopened.transcript.load()
    assert loaded.messages() == [Message.user("first")]
    assert loaded.warnings and "torn last line" in loaded.warnings[0]
    reopened.transcript.append_message(Message.user("second"))
    again = reopened.transcript.load()
    assert again.messages() == [Message.user("first"), Message.user("second")]
    assert "corrupt line" in again.warnings[0]  # the torn line stays on disk, still skipped


def test_a_corrupt_line_in_the_middle_loses_nothing_else(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    session = store.open("agent:main:main")
    session.transcript.append_message(Message.user("one"))
    with session.transcript.path.open("a") as handle:
        handle.write("not json at all\n")
    session.transcript.append_message(Message.user("two"))
    loaded = session.transcript.load()
    assert loaded.messages() == [Message.user("one"), Message.user("two")]
    assert len(loaded.warnings) == 1


def test_tool_calls_without_results_are_answered_with_an_error() -> None:
    history = [Message.user("go"), _assistant_calling(("c1", "read"), ("c2", "ls")), _result("c1"), Message.user("next")]
    repaired = repair_tool_calls(history)
    assert [m.role for m in repaired] == [Role.USER, Role.ASSISTANT, Role.TOOL_RESULT, Role.TOOL_RESULT, Role.USER]
    filler = repaired[3]
    assert filler.tool_call_id == "c2" and filler.is_error and filler.text == INTERRUPTED
    assert repair_tool_calls([Message.user("x"), _result("ghost")]) == [Message.user("x")]


def test_crash_mid_tool_leaves_a_loadable_session(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    session = store.open("agent:main:main")
    session.transcript.append_message(Message.user("read it"))
    session.transcript.append_message(_assistant_calling(("c9", "read")))
    messages = store.open("agent:main:main").transcript.load().messages()
    assert messages[-1].role == Role.TOOL_RESULT and messages[-1].tool_call_id == "c9" and messages[-1].is_error


def test_the_index_is_rebuilt_from_transcripts_when_lost_or_corrupt(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    first = store.open("agent:main:main")
    other = store.open("agent:main:terminal:group:g1")
    store.record_turn("agent:main:main", usage=Usage(100, 20, 50, 0), model="openai/gpt-test")
    index_file = tmp_path / "main" / "sessions.json"
    assert json.loads(index_file.read_text())["agent:main:main"]["turns"] == 1
    index_file.write_text("{broken")
    assert store.get("agent:main:main").session_id == first.info.session_id
    index_file.unlink()
    keys = {i.key: i.session_id for i in store.list()}
    assert keys == {"agent:main:main": first.info.session_id, "agent:main:terminal:group:g1": other.info.session_id}


def test_new_session_replaces_the_current_one_for_the_key(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    old = store.open("agent:main:main")
    old.transcript.append_message(Message.user("old"))
    fresh = store.open("agent:main:main", new=True)
    assert fresh.created and fresh.info.session_id != old.info.session_id
    assert store.open("agent:main:main").transcript.load().messages() == []
    assert old.transcript.path.exists()  # the old transcript is kept


def test_a_compaction_cut_off_anywhere_while_written_leaves_the_history_as_it_was(tmp_path: Path) -> None:
    """A process killed while writing a compaction (the kernel may stop a large write part
    way) leaves a prefix of its line: loading gives the history before it, never a summary
    without the messages it kept."""
    store = SessionStore(tmp_path)
    session = store.open("agent:main:main")
    before = [Message.user("tell me about cats " * 200), Message.assistant("Cats are great."), Message.user("and dogs?")]
    for message in before:
        session.transcript.append_message(message)
    path = session.transcript.path
    original = path.read_bytes()
    session.transcript.append("compaction", kept=(before[-1],), summary="They talked about cats.", first_kept_id="x")
    whole = path.read_bytes()
    compacted = store.open("agent:main:main").transcript.load().messages()
    assert [m.text for m in compacted[1:]] == ["and dogs?"] and "They talked about cats." in compacted[0].text
    line = whole[len(original) :]
    for cut in sorted({1, 2, 40, len(line) // 3, len(line) // 2, len(line) - 2}):
        path.write_bytes(original + line[:cut])
        loaded = store.open("agent:main:main").transcript.load()
        assert loaded.messages() == before, cut
        assert loaded.warnings and "torn last line" in loaded.warnings[0]
    path.write_bytes(whole[:-1])  # everything but the line's end: the entry is whole
    assert store.open("agent:main:main").transcript.load().messages() == compacted
