"""`clawbot onboard` stores exactly what it checked: a key or base URL left out keeps the stored
one, a key the provider did not reject is stored, and the retry hint repeats what was given."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from clawbot.testing.cli import invoke_cli

CLEAN = {"OPENAI_BASE_URL": None, "OPENAI_API_KEY": None, "OLLAMA_API_KEY": None, "OLLAMA_BASE_URL": None, "ANTHROPIC_BASE_URL": None}


def cli(*args: str, home: Path, env: dict[str, str] | None = None):
    return invoke_cli(*args, home=home, env={**CLEAN, **(env or {})})


def stored(home: Path, provider: str = "openai") -> dict[str, str]:
    return json.loads((home / "credentials" / f"{provider}.json").read_text())


@pytest.mark.parametrize(
    ("provider", "first", "again", "kept"),
    [
        # a new key for a proxy: the proxy's base URL stays, and the check went to the proxy
        ("openai", ("--api-key", "sk-proxy-1"), ("--api-key", "sk-proxy-2"), {"api_key": "sk-proxy-2"}),
        # a local server onboarded again without a key: the stored key stays
        ("ollama", ("--api-key", "sk-ollama"), (), {"api_key": "sk-ollama"}),
    ],
)
def test_a_field_left_out_keeps_the_stored_one_and_the_check_uses_it(
    tmp_path: Path, fake_llm_thread, provider: str, first: tuple[str, ...], again: tuple[str, ...], kept: dict[str, str]
) -> None:
    url = f"{fake_llm_thread.base_url}/v1"
    fake_llm_thread.reply("OK").reply("OK")
    result = cli("onboard", "--provider", provider, *first, "--base-url", url, "--model", "m", home=tmp_path)
    assert result.returncode == 0, result.stderr
    result = cli("onboard", "--provider", provider, *again, "--model", "m", home=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "answered" in result.stdout
    assert stored(tmp_path, provider) == {**kept, "base_url": url}
    assert fake_llm_thread.requests[-1].headers["authorization"] == f"Bearer {kept['api_key']}"  # checked as stored


def test_an_empty_base_url_clears_the_stored_one_on_purpose(tmp_path: Path, fake_llm_thread) -> None:
    url = f"{fake_llm_thread.base_url}/v1"
    assert cli("onboard", "--provider", "openai", "--api-key", "sk-1", "--base-url", url, "--model", "m", "--no-check", home=tmp_path).returncode == 0
    result = cli("onboard", "--provider", "openai", "--base-url", "", "--model", "m", "--no-check", home=tmp_path)
    assert result.returncode == 0, result.stderr
    assert stored(tmp_path) == {"api_key": "sk-1"}


@pytest.mark.parametrize("kind", ["rate_limit", "overloaded", "server_error", "billing"])
def test_a_key_the_provider_did_not_reject_is_stored_with_a_note(tmp_path: Path, fake_llm_thread, kind: str) -> None:
    fake_llm_thread.fail(kind, times=10, retry_after=0)
    url = f"{fake_llm_thread.base_url}/v1"
    result = cli("onboard", "--provider", "openai", "--api-key", "sk-valid", "--base-url", url, "--model", "m", home=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "did not answer the check" in result.stdout and "the key was not rejected, so it is stored" in result.stdout
    assert stored(tmp_path) == {"api_key": "sk-valid", "base_url": url}
    assert 'primary = "openai/m"' in (tmp_path / "clawbot.toml").read_text()


def test_a_refused_check_says_why_and_repeats_the_arguments_given_without_the_key(tmp_path: Path, fake_llm_thread) -> None:
    url = f"{fake_llm_thread.base_url}/v1"
    cases = [
        ("auth", url, "the key was rejected", f"--provider openai --api-key KEY --base-url {url} --model m --set-default"),
        ("unknown_model", url, "the provider does not know the model", f"--provider openai --api-key KEY --base-url {url} --model MODEL --set-default"),
        (None, "http://127.0.0.1:9/v1", "the server could not be reached", "--provider openai --api-key KEY --base-url URL --model m --set-default"),
    ]
    for kind, base_url, why, hint in cases:
        if kind is not None:
            fake_llm_thread.fail(kind, times=1)
        args = ("onboard", "--provider", "openai", "--api-key", "sk-secret-typo", "--base-url", base_url, "--model", "m", "--set-default")
        result = cli(*args, home=tmp_path)
        assert result.returncode == 1, (kind, result.stdout)
        assert f"check failed, {why}" in result.stderr, kind
        assert f"`clawbot onboard {hint}`" in result.stderr, (kind, result.stderr)
        assert "sk-secret-typo" not in result.stdout + result.stderr
        assert not (tmp_path / "credentials" / "openai.json").exists()


def test_onboard_says_when_the_configuration_file_or_the_environment_wins_over_what_it_stores(tmp_path: Path, fake_llm_thread) -> None:
    url = f"{fake_llm_thread.base_url}/v1"
    config = tmp_path / "clawbot.toml"
    config.write_text(f'[providers.openai]\nbase_url = "{url}"\n')
    result = cli(
        "onboard", "--provider", "openai", "--api-key", "sk-new", "--base-url", "https://proxy.example/v1", "--model", "m", "--no-check",
        home=tmp_path, env={"OPENAI_API_KEY": "sk-from-env"},
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert f"note: base_url in [providers.openai] of {config} is used instead of the stored value" in result.stdout
    assert "note: OPENAI_API_KEY is set in your environment; it is used instead of the stored value" in result.stdout
    assert "sk-new" not in result.stdout and "sk-from-env" not in result.stdout


def test_the_retry_hint_never_repeats_credentials_written_into_the_base_url(tmp_path: Path, fake_llm_thread) -> None:
    host = fake_llm_thread.base_url.split("://", 1)[1]
    url = f"http://proxyuser:secret-pw@{host}/v1?token=secret-q"
    result = cli("onboard", "--provider", "openai", "--api-key", "sk-x", "--base-url", url, "--model", "m", home=tmp_path)
    assert result.returncode == 1, result.stdout  # the query makes the check fail
    assert f"--base-url 'http://USER:PASSWORD@{host}/v1?QUERY' --model" in result.stderr, result.stderr
    assert "secret" not in result.stdout + result.stderr and "proxyuser" not in result.stdout + result.stderr
