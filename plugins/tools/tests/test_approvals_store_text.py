"""exec-approvals.json stores any command text and reads it back: a remembered command whose
text holds a lone surrogate or NUL must not make ``/approve ... allow-always`` fail."""

from __future__ import annotations

from pathlib import Path

import pytest
from clawbot.testing import AWKWARD_TEXT
from clawbot_tools.runtime.approvals_store import ApprovalsStore
from clawbot_tools.runtime.executables import Program


@pytest.mark.parametrize("name", list(AWKWARD_TEXT))
def test_remembered_commands_and_programs_hold_any_text(tmp_path: Path, name: str) -> None:
    weird = AWKWARD_TEXT[name]
    command = {"command": weird, "cwd": weird, "env": {weird: weird}, "network": False, "sandbox": "bwrap", "interactive": False}
    store = ApprovalsStore(tmp_path / "exec-approvals.json")
    store.add_command("main", command, {weird: weird})
    store.add("main", [Program(weird, weird)])

    again = ApprovalsStore(tmp_path / "exec-approvals.json")
    assert again.remembered("main", command) == [{weird: weird}]
    assert again.allowed("main") == (Program(weird, weird),)
