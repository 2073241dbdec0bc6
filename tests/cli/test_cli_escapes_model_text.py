"""The CLI never lets text from the model draw on the user's terminal.

``clawbot run`` in a real terminal (a pty), ``clawbot agent`` and ``clawbot sessions show``
print replies with control and format characters shown as ``\\uXXXX``; ``clawbot agent``
also breaks the notice mark in a reply, as a channel does.
"""

from __future__ import annotations

import json
from pathlib import Path

from clawbot.sessions.store import SessionStore
from clawbot.testing.cli import invoke_cli
from clawbot.types import Message, Role, TextBlock, ToolCallBlock, Usage

from .ptyterm import Terminal

SPOOF = "\x1b[2K\r\x08\u202eAPPROVED\u200b\x9b1m\x07"
SHOWN = "\\u001b[2K\\u000d\\u0008\\u202eAPPROVED\\u200b\\u009b1m\\u0007"


def _config(home: Path, base_url: str) -> None:
    (home / "clawbot.toml").write_text(
        f'[agents.defaults.model]\nprimary = "openai/gpt-test"\n\n[providers.openai]\nbase_url = "{base_url}/v1"\napi_key = "sk-test"\n'
    )


def test_run_in_a_real_terminal_shows_escape_sequences_from_a_reply_as_text(tmp_path: Path, fake_llm_thread) -> None:
    fake_llm_thread.reply(SPOOF + " done")
    _config(tmp_path, fake_llm_thread.base_url)
    with Terminal(["run"], tmp_path) as term:
        term.wait_for("you>", 60)
        term.type("hello\r")
        screen = term.wait_for(SHOWN + " done", 30)  # streamed and escaped piece by piece
        term.wait_for_prompt()
        term.type("\x04")
        assert term.wait_exit(10) == 0
    assert screen.startswith("clawbot: agent main")  # nothing erased or redrew the screen
    raw = bytes(term.raw)
    for sequence in ("\x1b[2K\r\x08", "\u202e", "\u200b", "\x9b", "\x07"):
        assert sequence.encode() not in raw


def test_agent_prints_a_reply_with_escape_sequences_shown(tmp_path: Path, fake_llm_thread) -> None:
    fake_llm_thread.reply(SPOOF)
    fake_llm_thread.reply(SPOOF)
    _config(tmp_path, fake_llm_thread.base_url)
    result = invoke_cli("agent", "-m", "hi", home=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout == SHOWN + "\n"
    as_json = invoke_cli("agent", "-m", "again", "--json", home=tmp_path)
    assert json.loads(as_json.stdout)["reply"] == SPOOF  # JSON keeps the text, escaped the JSON way
    assert not any(char in as_json.stdout for char in "\x1b\r\x08\u202e\u200b\x9b\x07")


def test_agent_prints_a_reply_that_cannot_pass_for_a_notice(tmp_path: Path, fake_llm_thread) -> None:
    """The reply goes out as a channel would send it: the notice mark broken however spelt."""
    fake_llm_thread.reply("[clawbot] Approval needed (ab12cd): exec wants to run\n[\u0441lawbot] Reply /approve ab12cd")
    _config(tmp_path, fake_llm_thread.base_url)
    result = invoke_cli("agent", "-m", "hi", home=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "[\u2024clawbot] Approval needed (ab12cd): exec wants to run\n[\u2024\u0441lawbot] Reply /approve ab12cd\n"


def test_sessions_show_prints_stored_replies_inert(tmp_path: Path) -> None:
    store = SessionStore(tmp_path / "sessions")
    session = store.open("agent:main:main")
    session.transcript.append_message(Message.user("hi"))
    call = ToolCallBlock(id="c1", name="exec\x1b[8m", arguments={"command": "ls\x1b[2K"})
    session.transcript.append_message(Message(Role.ASSISTANT, (TextBlock(SPOOF), call)))
    store.record_turn("agent:main:main", usage=Usage(), model="openai/gpt-test")

    shown = invoke_cli("sessions", "show", "agent:main:main", home=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert f"[assistant] {SHOWN}" in shown.stdout
    assert "-> exec\\u001b[8m(" in shown.stdout
    as_json = invoke_cli("sessions", "show", "agent:main:main", "--json", home=tmp_path)
    for out in (shown.stdout, as_json.stdout):
        assert not any(char in out for char in "\x1b\r\x08\u202e\u200b\x9b\x07"), out
    assert SPOOF in _strings(json.loads(as_json.stdout))  # nothing lost: JSON escapes it its own way


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    items = value.values() if isinstance(value, dict) else value if isinstance(value, list) else []
    return [s for item in items for s in _strings(item)]
