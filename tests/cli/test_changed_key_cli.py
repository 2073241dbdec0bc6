"""A rejected key, then the user replaces it: with the real ``clawbot agent`` on the fake LLM
server. The old key's failure says the key was rejected (not "rate-limiting") and until when
it rests; the new key (another fingerprint) is sent on the very next message, wherever it
comes from (the config file, the environment, the stored credentials)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from clawbot.credentials import save_credential
from clawbot.paths import StatePaths
from clawbot.testing.cli import invoke_cli

PROVIDERS = {  # provider -> (model, base URL suffix, environment variable of the key)
    "anthropic": ("claude-test", "", "ANTHROPIC_API_KEY"),
    "openai": ("gpt-test", "/v1", "OPENAI_API_KEY"),
}
OLD, NEW = "sk-old-key", "sk-new-key"


def keys_sent(fake) -> list[str]:
    return [(r.headers.get("authorization") or "").removeprefix("Bearer ") or r.headers.get("x-api-key", "") for r in fake.requests]


def use_key(home: Path, fake, provider: str, source: str, key: str) -> dict[str, str]:
    """Configure ``key`` for ``provider`` the way ``source`` says; the environment to run with."""
    model, suffix, variable = PROVIDERS[provider]
    section = f'[providers.{provider}]\nbase_url = "{fake.base_url}{suffix}"\n'
    if source == "config":
        section += f'api_key = "{key}"\n'
    (home / "clawbot.toml").write_text(f'[agents.defaults.model]\nprimary = "{provider}/{model}"\n\n{section}')
    if source == "credentials":
        save_credential(StatePaths(home), provider, api_key=key)
    return {variable: key} if source == "env" else {}


@pytest.mark.parametrize(("provider", "source"), [("anthropic", "env"), ("openai", "credentials"), ("anthropic", "config")])
def test_a_key_replaced_after_a_401_is_used_on_the_next_message(tmp_path: Path, fake_llm_thread, provider, source) -> None:
    fake = fake_llm_thread
    fake.fail("auth")
    env = use_key(tmp_path, fake, provider, source, OLD)

    rejected = invoke_cli("agent", "-m", "hi", home=tmp_path, env=env)
    assert rejected.returncode != 0 and keys_sent(fake) == [OLD]
    assert "rejected the API key" in rejected.stderr and "rate-limiting" not in rejected.stderr, rejected.stderr
    state = json.loads((tmp_path / "auth-state.json").read_text(encoding="utf-8"))
    assert OLD not in json.dumps(state)  # kept under a fingerprint, never the key itself

    # the same key again: not sent, and the message still names the real cause and until when
    again = invoke_cli("agent", "-m", "hi again", home=tmp_path, env=env)
    assert again.returncode != 0 and keys_sent(fake) == [OLD]
    assert "rejected the API key" in again.stderr and "rate-limiting" not in again.stderr, again.stderr
    assert re.search(r"not tried again until \d\d:\d\d:\d\d \(in (1 min|[1-5]\d s)\)", again.stderr), again.stderr

    fake.reply("Hello with the new key.")
    env = use_key(tmp_path, fake, provider, source, NEW)
    served = invoke_cli("agent", "-m", "hi with the new key", home=tmp_path, env=env)
    assert served.returncode == 0, served.stderr
    assert served.stdout == "Hello with the new key.\n" and keys_sent(fake) == [OLD, NEW]
    assert "rate-limiting" not in served.stderr and "Traceback" not in served.stderr
