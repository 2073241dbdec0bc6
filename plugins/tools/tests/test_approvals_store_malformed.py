"""A malformed exec-approvals.json keeps its good entries; the next "allow always" drops the bad ones."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
from clawbot_tools.runtime.approvals_store import ApprovalsStore
from clawbot_tools.runtime.executables import Program

COMMAND = {"command": "make test", "cwd": "/ws", "env": {}, "network": False, "sandbox": "bwrap", "interactive": False}


def test_good_entries_keep_working_and_bad_ones_are_reported_once_then_dropped(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "exec-approvals.json"
    path.write_text(
        json.dumps(
            {
                "version": 2,
                "agents": {
                    "main": {
                        "programs": [{"path": "/usr/bin/jq", "name": "jq"}, {"path": 5, "name": "x"}, 7],
                        "commands": [COMMAND, {**COMMAND, "network": "yes"}, {**COMMAND, "files": {"/ws/Makefile": 5}}],
                    },
                    "other": 5,
                },
            }
        ),
        encoding="utf-8",
    )
    store = ApprovalsStore(path)
    with caplog.at_level(logging.WARNING):
        for _ in range(3):  # every exec call reads the file
            assert store.allowed("main") == (Program("/usr/bin/jq", "jq"),)
            assert store.remembered("main", COMMAND) == [None]  # written before files were bound
            assert store.allowed("other") == ()
    warnings = [r.getMessage() for r in caplog.records if str(path) in r.getMessage()]
    assert len(warnings) == 5 and len(set(warnings)) == 5, warnings  # two programs, two commands, one agent
    store.add("main", [Program("/usr/bin/wc", "wc")])
    stored = json.loads(path.read_text(encoding="utf-8"))
    assert stored == {
        "version": 3,
        "agents": {"main": {"programs": [{"path": "/usr/bin/jq", "name": "jq"}, {"path": "/usr/bin/wc", "name": "wc"}], "commands": [COMMAND]}},
    }
