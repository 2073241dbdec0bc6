"""`clawbot doctor` judges the keys a turn really uses: every key of the default model rejected
is a failure, `--live` sends the key a turn would send (an `[[auth.profiles]]` key too), and a
provider with no key of its own is not reported as a rejected "default" key.

A turn runs first through the real CLI against the fake LLM server, so the cooldowns doctor
reads are the ones a turn left behind.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from clawbot.testing.cli import invoke_cli

CLEAN = {"OPENAI_BASE_URL": None, "OPENAI_API_KEY": None, "OLLAMA_API_KEY": None, "ANTHROPIC_BASE_URL": None, "OLLAMA_BASE_URL": "http://127.0.0.1:9/v1"}


def cli(*args: str, home: Path):
    return invoke_cli(*args, home=home, env=CLEAN)


def marked(output: str, mark: str) -> list[str]:
    return [line for line in output.splitlines() if line.startswith(mark)]


def profile_config(url: str) -> str:
    return (
        f'[agents.defaults]\nmodel = "openai/gpt-a"\n\n[providers.openai]\nbase_url = "{url}/v1"\n\n'
        '[[auth.profiles]]\nid = "work"\nprovider = "openai"\napi_key = "sk-profile-key"\n'
    )


@pytest.mark.parametrize(("kind", "fix"), [("auth", "clawbot onboard --provider openai"), ("billing", "check your plan or credits")])
def test_every_key_of_the_default_model_rejected_is_a_failure(tmp_path: Path, fake_llm_thread, kind: str, fix: str) -> None:
    url = f"{fake_llm_thread.base_url}/v1"
    stored = cli("onboard", "--provider", "openai", "--api-key", "sk-revoked", "--base-url", url, "--model", "gpt-a", "--no-check", home=tmp_path)
    assert stored.returncode == 0, stored.stderr
    fake_llm_thread.fail(kind, times=5)
    assert cli("agent", "-m", "hello", home=tmp_path).returncode != 0
    doctor = cli("doctor", home=tmp_path)
    assert doctor.returncode == 1, doctor.stdout
    failures = [line for line in marked(doctor.stdout, "FAIL") if " key " in line]
    assert len(failures) == 1 and "openai: every key was" in failures[0] and "agent main cannot use openai/gpt-a" in failures[0], doctor.stdout
    assert fix in doctor.stdout
    assert "all checks passed" not in doctor.stdout and "sk-revoked" not in doctor.stdout


def test_a_rate_limited_key_is_only_a_warning(tmp_path: Path, fake_llm_thread) -> None:
    url = f"{fake_llm_thread.base_url}/v1"
    assert cli("onboard", "--provider", "openai", "--api-key", "sk-busy", "--base-url", url, "--model", "gpt-a", "--no-check", home=tmp_path).returncode == 0
    fake_llm_thread.fail("rate_limit", times=20, retry_after=0)
    cli("agent", "-m", "hello", home=tmp_path)
    doctor = cli("doctor", home=tmp_path)
    assert [line for line in marked(doctor.stdout, "warn") if "cooldown" in line], doctor.stdout
    assert not [line for line in marked(doctor.stdout, "FAIL") if " key " in line], doctor.stdout


def test_live_sends_the_auth_profile_key_a_turn_uses_and_no_keyless_default_is_rested(tmp_path: Path, fake_llm_thread) -> None:
    (tmp_path / "clawbot.toml").write_text(profile_config(fake_llm_thread.base_url))
    fake_llm_thread.reply("hello").reply("OK")
    turn = cli("agent", "-m", "hello", home=tmp_path)
    assert turn.returncode == 0, turn.stderr
    doctor = cli("doctor", "--live", home=tmp_path)
    assert "ok   live     openai/gpt-a answered one short request (key work)" in doctor.stdout, doctor.stdout
    assert [r.headers["authorization"] for r in fake_llm_thread.requests] == ["Bearer sk-profile-key"] * 2
    # the provider has no key of its own: nothing called "default" was tried, rested or reported
    assert "cooldown" not in doctor.stdout and "key default" not in doctor.stdout
    state = tmp_path / "auth-state.json"
    assert not state.exists() or not [k for k in json.loads(state.read_text()) if "/default" in k]
    assert doctor.returncode == 0, doctor.stdout


def test_the_config_line_fails_when_the_file_names_an_engine_nobody_offers(tmp_path: Path) -> None:
    (tmp_path / "clawbot.toml").write_text('[memory]\nprovider = "nope"\n')
    doctor = cli("doctor", home=tmp_path)
    config = [line for line in doctor.stdout.splitlines() if line[5:].startswith("config")]
    assert config == ["FAIL config   memory.provider: no installed plugin offers the memory provider 'nope' (installed: sqlite)"], doctor.stdout
