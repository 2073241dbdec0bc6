"""The record of running sub-agents is read as tolerantly as the session files: whatever is
wrong with the file or one entry is reported once, naming the file, and the good entries are
still announced; nothing raises."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
from clawbot.types import InboundMessage
from clawbot_subagents.record import SubagentRecord

GOOD = InboundMessage(channel="telegram", peer_id="42", text="hello", message_id="7", sender_id="42")


def _warned(caplog: pytest.LogCaptureFixture, path: Path) -> bool:
    return any(str(path) in record.getMessage() and record.levelno == logging.WARNING for record in caplog.records)


@pytest.mark.parametrize(
    "entry",
    [[], "x", {"agent_id": 1}, {"task": "t"}, {**{k: "v" for k in ("agent_id", "session_key", "task", "parent_session_key")}, "parent_origin": {"text": 1}}],
)
def test_a_bad_sub_agent_entry_is_reported_and_the_good_ones_announced(tmp_path: Path, entry, caplog) -> None:
    record = SubagentRecord(tmp_path / "gateway" / "subagents.json")
    record.started("good", "main", "agent:main:subagent:good", "work", "agent:main:main", GOOD)
    data = json.loads(record.path.read_text())
    data["bad"] = entry
    record.path.write_text(json.dumps(data))
    (cut_off,) = record.take_cut_off()
    assert (cut_off.run_id, cut_off.parent_origin.peer_id if cut_off.parent_origin else None) == ("good", "42")
    assert cut_off.parent_origin.text == ""  # what someone wrote is not kept
    assert _warned(caplog, record.path)
    assert record.take_cut_off() == []  # taken once


@pytest.mark.parametrize("payload", [b"{torn", b"\xff", b"[]"], ids=["not JSON", "not UTF-8", "a list"])
def test_an_unreadable_sub_agent_file_announces_nothing_and_raises_nothing(tmp_path: Path, payload: bytes, caplog) -> None:
    record = SubagentRecord(tmp_path / "subagents.json")
    record.path.write_bytes(payload)
    assert record.take_cut_off() == []
    assert _warned(caplog, record.path)
