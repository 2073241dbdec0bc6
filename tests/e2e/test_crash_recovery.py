"""A process killed in the middle of a tool call leaves a session the next run can continue.

A real ``clawbot agent`` subprocess talks to the fake LLM over loopback through the real
OpenAI plugin; the model calls a tool (from a plugin distribution installed for the test)
that blocks; the test SIGKILLs the process while the tool runs, damages the transcript's
last line like a crash mid-write would, and runs ``clawbot agent`` again.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from clawbot.sessions.transcript import INTERRUPTED
from clawbot.testing import install_distribution

from .e2etools import call, result, transcript_lines, user, wire_history

BLOCKER = """\
import asyncio
import os
from pathlib import Path

from clawbot import Tool, ToolResult, hookimpl


async def _block(call):
    # Written aside and renamed so the test never reads a created but still empty marker.
    marker = Path(os.environ["BLOCKER_MARKER"])
    marker.with_suffix(".tmp").write_text(call.call_id)
    marker.with_suffix(".tmp").replace(marker)
    await asyncio.sleep(60)
    return ToolResult.text("unblocked")


@hookimpl
def clawbot_tools(ctx):
    return [Tool("block", "Blocks for a minute.", {"type": "object", "properties": {}}, _block, timeout_s=120)]
"""


def _env(home: Path, site: Path, marker: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CLAWBOT_")}
    for secret in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL"):
        env.pop(secret, None)
    env.update({"CLAWBOT_HOME": str(home), "HOME": str(home), "NO_COLOR": "1", "BLOCKER_MARKER": str(marker)})
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(site), env.get("PYTHONPATH")]))
    return env


def _clawbot(*args: str) -> list[str]:
    return [sys.executable, "-m", "clawbot.cli.main", *args]


def test_a_killed_turn_is_repaired_and_the_session_continues(tmp_path: Path, fake_llm_thread) -> None:
    fake = fake_llm_thread
    home, site, marker = tmp_path / "home", tmp_path / "site", tmp_path / "blocking"
    home.mkdir()
    install_distribution(site, "clawbot-blocker", entry_points={"blocker": "blocker_plugin"}, modules={"blocker_plugin.py": BLOCKER})
    (home / "clawbot.toml").write_text(
        f'[agents.defaults.model]\nprimary = "openai/gpt-test"\n\n[providers.openai]\nbase_url = "{fake.base_url}/v1"\napi_key = "sk-test"\n',
        encoding="utf-8",
    )
    env = _env(home, site, marker)
    fake.tool_call("block", {})
    fake.reply("Picking up where we left off.")

    first = subprocess.Popen(_clawbot("agent", "-m", "run the blocker"), cwd=home, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while not marker.exists():
            assert first.poll() is None, f"the first run ended early: {first.communicate()}"
            assert time.monotonic() < deadline, "the blocking tool never started"
            time.sleep(0.02)
    finally:
        first.kill()  # SIGKILL: no cleanup, no "aborted" entry
        first.communicate(timeout=10)
    assert first.returncode == -9
    call_id = marker.read_text()

    (path,) = (home / "sessions").rglob("*.jsonl")
    lines = transcript_lines(path)
    assert [line.get("message", {}).get("role") for line in lines[1:]] == ["user", "assistant"]  # no tool result
    assert lines[2]["message"]["content"][0]["id"] == call_id
    with path.open("a", encoding="utf-8") as handle:
        handle.write('{"type": "message", "id": "torn", "message": {"role": "assist')  # a crash mid-write

    shown = subprocess.run(_clawbot("sessions", "show", "agent:main:main"), cwd=home, env=env, capture_output=True, text=True, timeout=30)
    assert shown.returncode == 0, shown.stderr
    assert f"warning: {path.name}:4: skipped torn last line" in shown.stderr
    assert shown.stdout.splitlines()[-1] == f"[tool_result] {INTERRUPTED}"

    second = subprocess.run(_clawbot("agent", "-m", "continue"), cwd=home, env=env, capture_output=True, text=True, timeout=30)

    assert second.returncode == 0, second.stderr
    assert second.stdout.strip() == "Picking up where we left off."
    assert "block" in fake.requests[0].tools
    assert len(fake.requests) == 2
    # a valid history: the dangling call answered by an error result right after it, then the new message
    assert wire_history(fake.requests[1]) == [
        user("run the blocker"),
        call(call_id, "block", {}),
        result(call_id, INTERRUPTED, True),
        user("continue"),
    ]
    raw = fake.requests[1].body["messages"]
    assert [m["role"] for m in raw] == ["system", "user", "assistant", "tool", "user"]

    # the torn line stays skipped; the entries written after it are whole
    shown = subprocess.run(_clawbot("sessions", "show", "agent:main:main"), cwd=home, env=env, capture_output=True, text=True, timeout=30)
    assert shown.returncode == 0, shown.stderr
    assert f"warning: {path.name}:4: skipped corrupt line" in shown.stderr
    assert shown.stdout.splitlines()[-2:] == ["[user] continue", "[assistant] Picking up where we left off."]
