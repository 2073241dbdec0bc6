"""`clawbot sessions` reads what turns wrote (the real CLI, in process)."""

from __future__ import annotations

import json
from pathlib import Path

from clawbot.sessions.store import SessionStore
from clawbot.testing.cli import invoke_cli
from clawbot.types import Message, Usage


def test_list_show_and_path(tmp_path: Path) -> None:
    store = SessionStore(tmp_path / "sessions")
    session = store.open("agent:main:main")
    session.transcript.append_message(Message.user("what is 2+2?"))
    session.transcript.append_message(Message.assistant("4"))
    store.record_turn("agent:main:main", usage=Usage(80, 5, 20, 0), model="openai/gpt-test")

    listed = invoke_cli("sessions", "list", "--json", home=tmp_path)
    assert listed.returncode == 0, listed.stderr
    (info,) = json.loads(listed.stdout)
    assert info["key"] == "agent:main:main" and info["turns"] == 1 and info["usage"]["cache_read_tokens"] == 20
    assert "cache=20%" in invoke_cli("sessions", "list", home=tmp_path).stdout

    shown = invoke_cli("sessions", "show", "agent:main:main", home=tmp_path)
    assert shown.stdout.splitlines() == ["[user] what is 2+2?", "[assistant] 4"]
    path = invoke_cli("sessions", "path", "agent:main:main", home=tmp_path).stdout.strip()
    assert Path(path) == session.transcript.path

    missing = invoke_cli("sessions", "show", "agent:main:nope", home=tmp_path)
    assert missing.returncode == 1 and "no session with key" in missing.stderr
