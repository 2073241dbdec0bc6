"""``clawbot doctor`` names the senders approved by pairing, and warns when they write into the
owner's main session (``session.non_owners_share_main`` with ``dm_scope = "main"``).

The real CLI in process, with the installed plugins; the approval is a real pairing file.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from clawbot.testing.cli import invoke_cli
from clawbot_pairing.store import PairingStore

TELEGRAM = '\n[channels.telegram]\nenabled = true\ntoken = "123:abc"\nallow_from = ["555"]\n'
OPENAI = '[agents.defaults]\nmodel = "openai/gpt-test"\n\n[providers.openai]\nbase_url = "http://127.0.0.1:9/v1"\n'
# nothing answers there: the doctor finds no local model server
QUIET = {"OLLAMA_BASE_URL": "http://127.0.0.1:9/v1", "NO_COLOR": "1", "COLUMNS": "250"}


def _paired(home: Path, sender: str, name: str) -> None:
    store = PairingStore.for_channel(home, "telegram")
    store.approve(store.ask(sender, "default", name).code)


def _sessions_lines(out: str) -> list[str]:
    return [line for line in out.splitlines() if re.match(r"^(ok  |info|warn|FAIL) sessions\b", line)]


@pytest.mark.parametrize(
    ("session", "level"),
    [
        ("", "ok  "),  # dm_scope = "main": the owner's alone
        ('[session]\ndm_scope = "per-peer"\nnon_owners_share_main = true\n', "ok  "),  # nobody shares a DM session
        ("[session]\nnon_owners_share_main = true\n", "warn"),
    ],
)
def test_doctor_warns_when_non_owners_can_write_into_the_main_session(clawbot_home: Path, session: str, level: str) -> None:
    _paired(clawbot_home, "4242", "Bob")
    (clawbot_home / "clawbot.toml").write_text(f"{OPENAI}\n{session}{TELEGRAM}")
    out = invoke_cli("doctor", home=clawbot_home, env=QUIET).stdout
    kernel_line, pairing_line = _sessions_lines(out)
    assert kernel_line.startswith(f"{level} sessions") and pairing_line.startswith(f"{level} sessions"), out
    assert "telegram: channels.telegram.allow_from = 555" in kernel_line and "telegram: approved by pairing: 4242 (Bob)" in pairing_line
    if level == "warn":
        assert "non-owners can write into the owner's main session" in kernel_line and "session.non_owners_share_main = true" in pairing_line
        assert "set session.non_owners_share_main = false" in out and "clawbot pairing revoke" in out
    else:
        assert "the main session is the owner's alone" in kernel_line and "each get a session of their own" in pairing_line


def test_doctor_says_nothing_of_pairing_when_nobody_was_approved(clawbot_home: Path) -> None:
    (clawbot_home / "clawbot.toml").write_text(f"{OPENAI}\n[session]\nnon_owners_share_main = true\n")
    PairingStore.for_channel(clawbot_home, "telegram").ask("4242", "default", "Bob")  # asked, never approved
    assert _sessions_lines(invoke_cli("doctor", home=clawbot_home, env=QUIET).stdout) == []
