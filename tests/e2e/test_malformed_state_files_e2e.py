"""A state file with a field of the wrong type never stops a turn.

Every state file clawbot reads under the state directory (auth profile health, the session
index, a transcript's lines, exec approvals, stored credentials) is written with one field
replaced by each wrong type in turn; a real turn (the real OpenAI SDK on the fake LLM, the
real exec tool) must still answer, and the warning must name the file, once per process.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import clawbot_tools.plugin
import pytest
from clawbot.agent.conversation import Conversation
from clawbot.agent.models import ModelChoice
from clawbot.testing.fake_llm import ToolCallSpec

from .e2etools import make_provider

KEY = "agent:main:main"
SESSION_ID = "0123456789abcdef0123456789abcdef"
STAMP = "2026-01-01T00:00:00.000+00:00"
# Written as JSON text: 1e400 loads as infinity, the long integer as an exact huge int.
WRONG = {
    "text": '"soon"',
    "int": "5",
    "negative": "-1",
    "fraction": "1.5",
    "bool": "true",
    "null": "null",
    "list": "[]",
    "object": "{}",
    "huge": "1e400",
    "huge-int": "1" + "0" * 400,
    "nan": "NaN",
    "nul": '"\\u0000"',
}


def _auth_state(home: Path, wrong: str) -> tuple[Path, str]:
    return home / "auth-state.json", '{"openai/default": ' + wrong + "}"


def _health_field(field: str) -> Callable[[Path, str], tuple[Path, str]]:
    def build(home: Path, wrong: str) -> tuple[Path, str]:
        good = {"failures": 0, "billing_failures": 0, "unusable_until": 0.0, "last_used": 0.0, "reason": "rate_limit"}
        return home / "auth-state.json", json.dumps({"openai/default": good}).replace(f'"{field}": {json.dumps(good[field])}', f'"{field}": {wrong}')

    return build


def _index_entry() -> dict[str, Any]:
    return {
        "key": KEY,
        "session_id": SESSION_ID,
        "created_at": STAMP,
        "updated_at": STAMP,
        "model": "openai/gpt-test",
        "thinking": "off",
        "turns": 1,
        "usage": {"input_tokens": 1, "output_tokens": 1},
        "cost_usd": 0.5,
        "auth_profile": "default",
    }


def _index_field(field: str) -> Callable[[Path, str], tuple[Path, str]]:
    def build(home: Path, wrong: str) -> tuple[Path, str]:
        _transcript(home)
        entry = _index_entry()
        marker = "\u2063MARK\u2063"
        if field == "entry":
            text = json.dumps({KEY: marker})
        elif field.startswith("usage."):
            entry["usage"][field.split(".")[1]] = marker
            text = json.dumps({KEY: entry})
        else:
            entry[field] = marker
            text = json.dumps({KEY: entry})
        return home / "sessions" / "main" / "sessions.json", text.replace(json.dumps(marker), wrong)

    return build


def _transcript(home: Path, line: str | None = None) -> Path:
    directory = home / "sessions" / "main"
    directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    header = {"type": "session", "version": 1, "id": SESSION_ID, "key": KEY, "agent": "main", "timestamp": STAMP}
    user = {
        "type": "message",
        "id": "aaaa00000001",
        "parent_id": None,
        "timestamp": STAMP,
        "message": {"role": "user", "content": [{"type": "text", "text": "earlier"}]},
    }
    path = directory / f"{SESSION_ID}.jsonl"
    path.write_text("\n".join([json.dumps(header), json.dumps(user), *([line] if line else [])]) + "\n", encoding="utf-8")
    return path


def _transcript_field(field: str) -> Callable[[Path, str], tuple[Path, str]]:
    def build(home: Path, wrong: str) -> tuple[Path, str]:
        marker = "\u2063MARK\u2063"
        line = {
            "type": "message",
            "id": "aaaa00000002",
            "parent_id": "aaaa00000001",
            "timestamp": STAMP,
            "message": {"role": "assistant", "content": [{"type": "text", "text": "before"}]},
        }
        if field == "line":
            line = marker
        elif field.startswith("message."):
            line["message"][field.split(".")[1]] = marker
        else:
            line[field] = marker
        path = _transcript(home, json.dumps(line).replace(json.dumps(marker), wrong))
        return path, path.read_text(encoding="utf-8")

    return build


def _approvals_field(field: str) -> Callable[[Path, str], tuple[Path, str]]:
    def build(home: Path, wrong: str) -> tuple[Path, str]:
        marker = "\u2063MARK\u2063"
        program = {"path": "/usr/bin/jq", "name": "jq"}
        command = {"command": "make --version", "cwd": "/", "env": {}, "network": False, "sandbox": "bwrap", "interactive": False}
        data: dict[str, Any] = {"version": 2, "agents": {"main": {"programs": [program], "commands": [command]}}}
        if field == "agents":
            data["agents"] = marker
        elif field == "agent":
            data["agents"]["main"] = marker
        elif field in ("programs", "commands"):
            data["agents"]["main"][field] = marker
        elif field.startswith("program."):
            program[field.split(".")[1]] = marker
        else:
            command[field.split(".")[1]] = marker
        return home / "exec-approvals.json", json.dumps(data).replace(json.dumps(marker), wrong)

    return build


def _credentials_field(field: str) -> Callable[[Path, str], tuple[Path, str]]:
    def build(home: Path, wrong: str) -> tuple[Path, str]:
        directory = home / "credentials"
        directory.mkdir(mode=0o700, exist_ok=True)
        text = wrong if field == "file" else '{"api_key": "sk-x", "' + field + '": ' + wrong + "}"
        return directory / "anthropic.json", text

    return build


FILES: dict[str, Callable[[Path, str], tuple[Path, str]]] = {
    "auth-state:entry": _auth_state,
    **{f"auth-state:{f}": _health_field(f) for f in ("failures", "billing_failures", "unusable_until", "last_used", "reason")},
    **{
        f"sessions.json:{f}": _index_field(f)
        for f in (
            "entry",
            "key",
            "session_id",
            "created_at",
            "updated_at",
            "model",
            "thinking",
            "turns",
            "usage",
            "usage.input_tokens",
            "usage.cache_read_tokens",
            "cost_usd",
            "auth_profile",
        )
    },
    **{f"transcript:{f}": _transcript_field(f) for f in ("line", "id", "type", "timestamp", "parent_id", "message", "message.role", "message.content")},
    **{
        f"exec-approvals:{f}": _approvals_field(f)
        for f in (
            "agents",
            "agent",
            "programs",
            "commands",
            "program.path",
            "program.name",
            "command.command",
            "command.cwd",
            "command.env",
            "command.network",
            "command.sandbox",
            "command.interactive",
        )
    },
    **{f"credentials:{f}": _credentials_field(f) for f in ("file", "api_key", "base_url")},
}


@pytest.mark.parametrize("case", sorted(FILES))
async def test_a_wrong_type_in_any_state_file_field_never_stops_a_turn(
    case: str, tmp_path: Path, fake_llm, make_kernel, caplog: pytest.LogCaptureFixture
) -> None:
    for kind, wrong in WRONG.items():
        home, workspace = tmp_path / kind / "home", tmp_path / kind / "workspace"
        home.mkdir(parents=True)
        workspace.mkdir()
        path, text = FILES[case](home, wrong)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        path.chmod(0o600)
        fake_llm.reply(tool_calls=[ToolCallSpec("exec", {"command": "make --version"})])
        fake_llm.reply(f"answer {kind}")
        fake_llm.reply(f"again {kind}")
        caplog.clear()
        with caplog.at_level(logging.WARNING):
            kernel = await make_kernel(
                home=home,
                plugins={"tools": clawbot_tools.plugin},
                config=f'[agents.defaults]\nworkspace = "{workspace}"\n\n[tools]\ndeny = ["process", "group:web"]\n',
                env={"PATH": os.environ.get("PATH", os.defpath)},
            )
            conversation = Conversation(kernel, ModelChoice(make_provider("openai-chat", fake_llm), "gpt-test"), "main", services=None)
            first = await conversation.send(KEY, "hello")
            second = await conversation.send(KEY, "and again")
        assert (first.text, second.text) == (f"answer {kind}", f"again {kind}"), (case, kind)
        records = [r for r in caplog.records if str(path) in r.getMessage()]
        assert "Traceback" not in caplog.text and all(r.exc_info is None for r in caplog.records), (case, kind)
        problems = [r.getMessage() for r in records]
        assert len(problems) == len(set(problems)), f"{case} {kind}: reported more than once: {problems}"
        if _is_wrong(case, kind):
            assert problems, f"{case} {kind}: no warning names {path}"


def _is_wrong(case: str, kind: str) -> bool:
    """Whether ``kind`` is really wrong for the field of ``case`` (a count may be 5, a text "soon")."""
    field = case.split(":")[1]
    if kind == "object" and case in ("auth-state:entry", "exec-approvals:agents", "exec-approvals:agent", "credentials:file"):
        return False  # an empty object is a valid empty entry
    if case == "exec-approvals:agent" and kind == "list":
        return False  # the first format: a list of programs
    if (case, kind) in (("transcript:message", "null"), ("transcript:message.content", "list")):
        return False  # an entry without a message; a message with no content
    if case == "sessions.json:session_id" and kind == "text":
        return False  # "soon" is a valid id (of a session with no transcript yet)
    counts = {"failures", "billing_failures", "turns", "usage.input_tokens", "usage.cache_read_tokens"}
    numbers = {"unusable_until", "last_used", "cost_usd"}
    texts = {
        "created_at",
        "updated_at",
        "timestamp",
        "command.command",
        "command.cwd",
        "api_key",
        "base_url",
        "program.path",
        "program.name",
        "model",
        "thinking",
        "auth_profile",
        "parent_id",
        "id",
        "type",
    }
    if field in counts:
        return kind not in ("int",)
    if field in numbers:
        return kind not in ("int", "fraction") and not (field == "cost_usd" and kind == "null")
    if field in texts:
        if kind == "null" and field in ("model", "thinking", "auth_profile", "parent_id"):
            return False
        if kind == "text":
            return False
        return kind != "nul"
    if field in ("command.network", "command.interactive"):
        return kind != "bool"
    if field == "command.sandbox":
        return kind not in ("text", "bool", "nul")
    if field == "command.env":
        return kind != "object"
    if field in ("programs", "commands"):
        return kind != "list"
    if field == "usage":
        return kind != "object"
    return True  # a whole entry, line, file or message part replaced by a scalar or the wrong shape


def test_clawbot_agent_answers_with_every_state_file_malformed_and_names_each_once(tmp_path: Path, fake_llm_thread) -> None:
    from tests.cli.clihelpers import run_cli

    home = tmp_path / "home"
    home.mkdir()
    (home / "clawbot.toml").write_text(
        f'[agents.defaults.model]\nprimary = "openai/gpt-test"\n\n[providers.openai]\nbase_url = "{fake_llm_thread.base_url}/v1"\napi_key = "sk-test"\n',
        encoding="utf-8",
    )
    broken = [
        build(home, WRONG["text"] if "auth" in case else WRONG["int"])
        for case, build in FILES.items()
        if case in ("auth-state:unusable_until", "exec-approvals:agent", "credentials:api_key", "transcript:id")
    ]
    for path, text in broken:
        path.write_text(text, encoding="utf-8")
        path.chmod(0o600)
    index = home / "sessions" / "main" / "sessions.json"
    index.write_text(json.dumps({KEY: {**_index_entry(), "turns": "many"}}), encoding="utf-8")
    fake_llm_thread.reply("still here")
    result = run_cli("agent", "-m", "hello", home=home)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "still here"
    assert "Traceback" not in result.stderr
    for path in [*(p for p, _ in broken if p.name != "exec-approvals.json"), index]:  # exec was not called
        assert result.stderr.count(str(path)) == 1, (path, result.stderr)
