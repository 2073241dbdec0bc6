"""A session's turns, tokens and cost outlive its index, and a full disk never hides a reply.

``sessions.json`` is derived data: each turn also writes its totals to the transcript, so an
index rebuilt after it was lost shows what ``clawbot sessions list`` showed before. When the
index cannot be written (here a real file size limit, RLIMIT_FSIZE, which fails writes with
EFBIG the way a full disk fails them with ENOSPC), the stored reply still reaches the user
and the next turn's write repairs the index. The real CLI on the real OpenAI SDK against the fake
LLM over loopback: in process, except the run under the file size limit, which needs a
process of its own for the limit to hold.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
from pathlib import Path

import pytest
from clawbot.sessions.store import SessionStore
from clawbot.testing.cli import CliRun, invoke_cli, subprocess_env

KEY = "agent:main:main"
CONFIG = """\
[agents.defaults.model]
primary = "openai/gpt-test"

[providers.openai]
base_url = "{base_url}/v1"
api_key = "sk-test"

[[usage.prices]]
model = "openai/gpt-test"
input = 3.0
output = 15.0
cache_read = 0.3
"""


def _home(tmp_path: Path, fake) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    (home / "clawbot.toml").write_text(CONFIG.format(base_url=fake.base_url), encoding="utf-8")
    return home


def _clawbot(home: Path, *args: str) -> CliRun:
    return invoke_cli(*args, home=home, env={"OPENAI_BASE_URL": None, "ANTHROPIC_BASE_URL": None})


def _clawbot_with_file_limit(home: Path, *args: str, file_limit: int) -> subprocess.CompletedProcess[str]:
    """``clawbot ARGS`` in a process no file of which may grow past ``file_limit`` bytes
    (nor a bytecode cache: only sessions.json may be the write that fails)."""
    env = subprocess_env(home, {"OPENAI_BASE_URL": None, "ANTHROPIC_BASE_URL": None, "PYTHONDONTWRITEBYTECODE": "1"})

    def limit_files() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (file_limit, file_limit))

    return subprocess.run(
        [sys.executable, "-m", "clawbot.cli.main", *args],
        cwd=home,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        preexec_fn=limit_files,
    )


def _listed(home: Path) -> list[dict]:
    done = _clawbot(home, "sessions", "list", "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def _without_time(entries: list[dict]) -> list[dict]:
    """The entries without the times of the last write (a rebuild takes them from the
    transcript's lines, written a moment apart from the index)."""
    return [{k: v for k, v in entry.items() if k not in ("updated_at", "last_user_at")} for entry in entries]


def test_a_rebuilt_session_index_keeps_turns_tokens_and_cost(tmp_path: Path, fake_llm_thread) -> None:
    fake = fake_llm_thread
    home = _home(tmp_path, fake)
    fake.tool_call("noop_missing", {})  # a tool round trip: two model calls in one turn
    fake.reply("First answer.", usage={"input_tokens": 1200, "output_tokens": 40, "cache_read_tokens": 1000})
    fake.reply("Second answer.", usage={"input_tokens": 900, "output_tokens": 25})
    for text in ("first", "second"):
        done = _clawbot(home, "agent", "-m", text)
        assert done.returncode == 0, done.stderr
    before = _listed(home)
    (entry,) = before
    assert entry["turns"] == 2 and entry["cost_usd"] > 0 and entry["usage"]["cache_read_tokens"] == 1000
    text_before = _clawbot(home, "sessions", "list").stdout

    (home / "sessions" / "main" / "sessions.json").unlink()

    after = _listed(home)
    assert _without_time(after) == _without_time(before)
    assert after[0]["updated_at"] >= after[0]["created_at"] and after[0]["last_user_at"] >= after[0]["created_at"]
    shown_after = _clawbot(home, "sessions", "list").stdout
    assert shown_after.split("  ")[2:] == text_before.split("  ")[2:]  # turns, tokens, cache, cost, model
    assert "turns=2" in shown_after and "cost=$" in shown_after

    fake.reply("Third answer.")
    assert _clawbot(home, "agent", "-m", "third").returncode == 0  # the count goes on from the rebuilt totals
    assert _listed(home)[0]["turns"] == 3


@pytest.mark.parametrize("earlier_turns", [0, 1], ids=["new session", "ongoing session"])
def test_a_reply_reaches_the_user_when_the_session_index_cannot_be_written(tmp_path: Path, fake_llm_thread, earlier_turns) -> None:
    fake = fake_llm_thread
    home = _home(tmp_path, fake)
    store = SessionStore(home / "sessions")
    for number in range(120):  # other chats: the index grows past the limit, the transcript stays small
        store.open(f"agent:main:telegram:dm:{number:04d}")
    index = home / "sessions" / "main" / "sessions.json"
    for _ in range(earlier_turns):
        fake.reply("Earlier.", usage={"input_tokens": 100, "output_tokens": 10})
        assert _clawbot(home, "agent", "-m", "earlier").returncode == 0
    fake.reply("Stored and shown.", usage={"input_tokens": 500, "output_tokens": 20})
    fake.reply("Next one.", usage={"input_tokens": 700, "output_tokens": 30})
    limit = 16 * 1024
    assert index.stat().st_size > limit

    done = _clawbot_with_file_limit(home, "agent", "-m", "hello", file_limit=limit)

    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "Stored and shown."
    assert "sessions.json" in done.stderr and "cannot be written" in done.stderr and "Traceback" not in done.stderr
    stored = [p for p in index.parent.glob("*.jsonl") if b'"key": "agent:main:main"' in p.read_bytes()]
    assert len(stored) == 1 and b"Stored and shown." in stored[0].read_bytes()

    done = _clawbot(home, "agent", "-m", "again")  # the disk has room again

    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "Next one."
    listed = {entry["key"]: entry for entry in _listed(home)}
    assert len(listed) == 121  # the other chats are all still there
    main = listed[KEY]
    assert main["session_id"] == stored[0].stem and main["turns"] == 2 + earlier_turns
    assert main["usage"]["input_tokens"] == 1200 + 100 * earlier_turns
    assert main["usage"]["output_tokens"] == 50 + 10 * earlier_turns
