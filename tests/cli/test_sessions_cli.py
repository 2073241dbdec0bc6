"""``clawbot sessions show|path|reset``: the keys ``clawbot agent --session`` takes, the
user's own text, and a reset that starts afresh the way /new does in a chat.

In process (click's CliRunner) against the fake LLM served from a thread; the lifecycle
hooks are watched by a real plugin distribution found through its entry point.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from clawbot.cli.main import cli
from clawbot.testing.distributions import install_distribution
from click.testing import CliRunner

from ..gateway.chatkit import open_chat

WATCHER = """\
import json, os
from clawbot import hookimpl


def _log(kind, event):
    with open(os.environ["SESSION_EVENTS"], "a") as handle:
        handle.write(json.dumps([kind, event.session_key, event.session_id, event.reason]) + "\\n")


@hookimpl
def clawbot_session_start(event):
    _log("start", event)


@hookimpl
def clawbot_session_end(event):
    _log("end", event)
"""


def clawbot(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    assert "Traceback" not in result.stdout + result.stderr
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def home(clawbot_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(clawbot_home)  # away from the checkout, whose example clawbot.toml would print an "ignored" note
    return clawbot_home


@pytest.fixture
def watched(home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake_llm_thread) -> Path:
    """A configured model on the fake LLM and a plugin writing every session event to a file."""
    install_distribution(tmp_path / "site", "session-watcher", entry_points={"session-watcher": "session_watcher"}, modules={"session_watcher.py": WATCHER})
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    monkeypatch.setenv("SESSION_EVENTS", str(tmp_path / "events.jsonl"))
    (home / "clawbot.toml").write_text(
        f'[agents.defaults.model]\nprimary = "openai/gpt-test"\n\n[providers.openai]\nbase_url = "{fake_llm_thread.base_url}/v1"\napi_key = "sk-test"\n'
    )
    return tmp_path / "events.jsonl"


def _events(path: Path) -> list[list[str]]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


@pytest.mark.hook_emission("clawbot_session_end")
def test_hook_session_end_is_fired_by_sessions_reset(watched: Path, fake_llm_thread) -> None:
    fake_llm_thread.reply("noted")
    assert clawbot("agent", "-m", "remember 42", "--session", "work")[0] == 0
    old_path = Path(clawbot("sessions", "path", "work")[1].strip())

    code, out, err = clawbot("sessions", "reset", "work")
    assert code == 0, err
    new_path = Path(clawbot("sessions", "path", "agent:main:work")[1].strip())
    assert new_path != old_path and "remember 42" in old_path.read_text()  # the old transcript is kept
    assert out.strip() == f"agent:main:work: new session {new_path.stem}; the previous one is kept in {old_path}"
    assert _events(watched) == [
        ["start", "agent:main:work", old_path.stem, "first message"],
        ["end", "agent:main:work", old_path.stem, "clawbot sessions reset"],
        ["start", "agent:main:work", new_path.stem, "clawbot sessions reset"],
    ]

    fake_llm_thread.reply("what 42?")
    assert clawbot("agent", "-m", "what did I say?", "--session", "work")[0] == 0
    assert len(fake_llm_thread.requests[-1].messages) == 2  # the system prompt and this message: nothing older
    assert clawbot("sessions", "show", "work")[1].splitlines() == ["[user] what did I say?", "[assistant] what 42?"]


def test_reset_of_a_session_that_does_not_exist_says_so(watched: Path) -> None:
    code, out, err = clawbot("sessions", "reset", "nosuch")
    assert code == 1 and err.strip() == "no session with key 'agent:main:nosuch' (see `clawbot sessions list`)"
    assert _events(watched) == []


@pytest.mark.parametrize("command", ["show", "path", "reset"])
def test_every_sessions_command_takes_the_keys_agent_takes(home: Path, command: str) -> None:
    (home / "clawbot.toml").write_text('[[agents.list]]\nid = "main"\ndefault = true\n\n[[agents.list]]\nid = "coder"\n')
    for args in (["main"], ["agent:coder:main"], ["--agent", "coder", "main"], ["--agent", "coder", "work"]):
        code, _, err = clawbot("sessions", command, *args)
        key = args[-1] if args[-1].startswith("agent:") else f"agent:{args[1] if len(args) == 3 else 'main'}:{args[-1]}"
        assert code == 1 and err.strip() == f"no session with key {key!r} (see `clawbot sessions list`)"


async def test_show_prints_what_the_user_wrote_and_raw_the_envelope(make_kernel, fake_channel, home: Path) -> None:
    from ..agent.scripted import ScriptedProvider

    chat = await open_chat(make_kernel, fake_channel, ScriptedProvider("Hi Alice."))
    await fake_channel.inject("hello\n\nthere", peer_id="alice", sender_name="Alice Smith", message_id="m-7")
    await chat.close()

    code, shown, err = clawbot("sessions", "show", "fake:dm:alice")  # a stranger: a session of their own
    assert code == 0, err
    assert shown == "[user: Alice Smith] hello\n\nthere\n[assistant] Hi Alice.\n"
    raw = clawbot("sessions", "show", "fake:dm:alice", "--raw")[1]
    assert "## Inbound Context (trusted metadata)" in raw and '"sender": "Alice Smith"' in raw and '\n\n"Alice Smith" (not the owner): hello' in raw
