"""``clawbot agent -m hi --json`` end to end: the real CLI (in process: nothing here needs a
process of its own), the real SDKs, the fake LLM over loopback."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from clawbot.testing.cli import CliRun, invoke_cli
from clawbot.testing.fake_llm import FakeLLM

#: besides the API keys, which every CLI run in a test starts without
LEAKY = ("OPENAI_BASE_URL", "ANTHROPIC_BASE_URL", "OPENAI_ORG_ID", "OPENAI_PROJECT_ID", "ANTHROPIC_AUTH_TOKEN")


def run_agent(home: Path, env: Mapping[str, str] | None = None) -> CliRun:
    return invoke_cli("agent", "-m", "hi", "--json", home=home, env={**dict.fromkeys(LEAKY), **(env or {})})


def test_agent_with_a_configured_openai_model(tmp_path: Path, fake_llm_thread: FakeLLM) -> None:
    fake_llm_thread.reply("Hi! I am the fake model.", usage={"input_tokens": 40, "output_tokens": 8, "cache_read_tokens": 100})
    (tmp_path / "clawbot.toml").write_text(
        f'[agents.defaults.model]\nprimary = "openai/gpt-test"\n[providers.openai]\nbase_url = "{fake_llm_thread.base_url}/v1"\napi_key = "sk-test"\n',
        encoding="utf-8",
    )
    result = run_agent(tmp_path)
    assert result.returncode == 0, result.stderr
    payload = json.loads(result.stdout)
    assert payload["reply"] == "Hi! I am the fake model."
    assert payload["model"] == "openai/gpt-test"
    assert payload["usage"] == {"input_tokens": 40, "output_tokens": 8, "cache_read_tokens": 100, "cache_write_tokens": 0, "cache_hit_share": 0.7143}
    assert "sk-test" not in result.stdout + result.stderr

    (request,) = fake_llm_thread.requests
    assert request.api == "openai-chat" and request.model == "gpt-test"
    assert request.headers["authorization"] == "Bearer sk-test"
    assert request.body["messages"][-1] == {"role": "user", "content": "hi"}
    assert request.body["messages"][0]["role"] == "system"


def test_agent_detects_anthropic_from_the_environment(tmp_path: Path, fake_llm_thread: FakeLLM) -> None:
    fake_llm_thread.reply("Hello from Claude.", usage={"input_tokens": 30, "output_tokens": 5, "cache_write_tokens": 20})
    (tmp_path / "clawbot.toml").write_text(f'[providers.anthropic]\nbase_url = "{fake_llm_thread.base_url}"\n', encoding="utf-8")
    result = run_agent(tmp_path, env={"ANTHROPIC_API_KEY": "sk-ant-env-secret"})
    assert result.returncode == 0, result.stderr
    payload = json.loads(result.stdout)
    assert payload["reply"] == "Hello from Claude."
    assert payload["model"] == "anthropic/claude-opus-4-5"
    assert payload["usage"] == {"input_tokens": 30, "output_tokens": 5, "cache_read_tokens": 0, "cache_write_tokens": 20, "cache_hit_share": 0.0}
    assert "sk-ant-env-secret" not in result.stdout + result.stderr

    (request,) = fake_llm_thread.requests
    assert request.api == "anthropic" and request.model == "claude-opus-4-5"
    assert request.body["system"][0]["cache_control"] == {"type": "ephemeral"}


def test_agent_reports_a_provider_error_briefly(tmp_path: Path, fake_llm_thread: FakeLLM) -> None:
    fake_llm_thread.fail("auth")
    (tmp_path / "clawbot.toml").write_text(
        f'[agents.defaults.model]\nprimary = "openai/gpt-test"\n[providers.openai]\nbase_url = "{fake_llm_thread.base_url}/v1"\napi_key = "sk-bad-key"\n',
        encoding="utf-8",
    )
    result = run_agent(tmp_path)
    assert result.returncode == 1
    assert "rejected the API key" in result.stderr
    assert "Traceback" not in result.stderr and "sk-bad-key" not in result.stdout + result.stderr
