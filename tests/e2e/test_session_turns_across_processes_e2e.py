"""Parallel ``clawbot agent`` processes on one session take turns, whole turns at a time.

Each real ``clawbot agent -m ask-<i>`` subprocess talks to the fake LLM over loopback through
the real OpenAI plugin and shares ``agent:main:main`` (as ``clawbot agent`` shares it with
the gateway's direct messages). The fake answers each request from what that request
carries: a user message ``ask-<i>`` gets an ``exec`` of ``echo ran-<i>``; a tool result gets
``answer to ask-<i> after <k> earlier turns``, ``k`` counted from the history it was sent.
So the transcript shows whether turns interleaved, each caller's output shows whose reply it
got, and the ``k`` values show whether each turn read the turns before it.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from clawbot.sessions.codec import make_data_converter
from clawbot.sessions.transcript import INTERRUPTED, load_transcript
from clawbot.testing.fake_llm import RecordedRequest, Reply, ToolCallSpec
from clawbot.types import Role

# Four processes started together already meet at the session (the first turn is slowed as
# well, so the others reach its lock while it is held); more would only cost interpreter starts.
CALLERS = 4
ASK = re.compile(r"ask-(\d+)")


def _text(content: object) -> str:
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content if isinstance(part, dict)) if isinstance(content, list) else ""


def _answer(request: RecordedRequest) -> Reply:
    messages = request.messages
    asks = [m for m in messages if m.get("role") == "user" and ASK.search(_text(m.get("content")))]
    ask = ASK.search(_text(asks[-1]["content"])).group(1)
    if messages[-1].get("role") == "tool":
        return Reply(text=f"answer to ask-{ask} after {len(asks) - 1} earlier turns ({_text(messages[-1].get('content')).split()[0]})")
    return Reply(tool_calls=[ToolCallSpec("exec", {"command": f"echo ran-{ask}"})])


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CLAWBOT_")}
    for secret in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL"):
        env.pop(secret, None)
    env.update({"CLAWBOT_HOME": str(home), "HOME": str(home), "NO_COLOR": "1"})
    return env


def test_parallel_agent_processes_on_one_session_take_whole_turns_in_order(tmp_path: Path, fake_llm_thread) -> None:
    fake = fake_llm_thread
    fake.queue(*[_answer] * (2 * CALLERS + 2))
    fake.fail("slow", delay=0.5)
    home, workspace = tmp_path / "home", tmp_path / "workspace"
    home.mkdir()
    workspace.mkdir()
    (home / "clawbot.toml").write_text(
        f'[agents.defaults]\nworkspace = "{workspace}"\n\n[agents.defaults.model]\nprimary = "openai/gpt-test"\n\n'
        f'[providers.openai]\nbase_url = "{fake.base_url}/v1"\napi = "chat"\napi_key = "sk-test"\n',
        encoding="utf-8",
    )
    env = _env(home)
    callers = [
        subprocess.Popen(
            [sys.executable, "-m", "clawbot.cli.main", "agent", "-m", f"ask-{i}"], cwd=home, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        for i in range(CALLERS)
    ]
    outputs = [caller.communicate(timeout=180) for caller in callers]

    for i, (caller, (out, err)) in enumerate(zip(callers, outputs, strict=True)):
        assert caller.returncode == 0, err
        assert "Traceback" not in err, err
        assert re.fullmatch(rf"answer to ask-{i} after \d+ earlier turns \(ran-{i}\)", out.strip()), (i, out)
    # Turns did meet: the later callers waited for the one holding the session, and said so.
    assert any("has a turn running in clawbot process" in err for _, err in outputs), [err for _, err in outputs]
    # Every turn read all the turns finished before it: each count of earlier turns once.
    earlier = sorted(int(re.search(r"after (\d+)", out).group(1)) for out, _ in outputs)
    assert earlier == list(range(CALLERS))

    [path] = (home / "sessions" / "main").glob("*.jsonl")
    loaded = load_transcript(path, make_data_converter())
    assert loaded.warnings == []
    entries = [e for e in loaded.entries if e.type == "message"]
    assert [e.parent_id for e in loaded.entries[1:]] == [e.id for e in loaded.entries[:-1]]  # one line of descent
    asked = []
    for start in range(0, len(entries), 4):
        user, call, result, answer = (e.message for e in entries[start : start + 4])
        i = ASK.search(user.text).group(1)
        asked.append(int(i))
        assert user.role == Role.USER
        assert call.role == Role.ASSISTANT and [c.arguments for c in call.tool_calls] == [{"command": f"echo ran-{i}"}]
        assert result.role == Role.TOOL_RESULT and result.tool_call_id == call.tool_calls[0].id  # right after its call
        assert f"ran-{i}" in result.text and not result.is_error
        assert answer.role == Role.ASSISTANT and answer.text.startswith(f"answer to ask-{i} ")
    assert sorted(asked) == list(range(CALLERS)) and len(entries) == 4 * CALLERS
    assert INTERRUPTED not in "".join(m.text for m in loaded.messages())
