"""The audit log writes one whole line for any text a tool call holds, and it reads back as
written (a lone surrogate used to make the append raise and the call go unlogged)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from clawbot.testing import AWKWARD_TEXT
from clawbot_tool_audit.audit import AuditLog


@pytest.mark.parametrize("name", list(AWKWARD_TEXT))
def test_an_entry_with_any_text_is_one_readable_line(tmp_path: Path, name: str) -> None:
    weird = AWKWARD_TEXT[name]
    log = AuditLog(tmp_path / "audit.jsonl")
    record = {"tool": weird, "arguments": {weird: [weird]}, "result": weird}
    log.append(record)
    log.append({"tool": "next"})

    lines = log.path.read_bytes().decode("utf-8").split("\n")
    assert [json.loads(line) for line in lines[:2]] == [record, {"tool": "next"}] and lines[2] == ""
