"""`clawbot doctor` checks what a turn needs: a model, its key (and where it comes from), keys
resting after failures, the workspace, private state modes, and with --live one real request.

In process with click's CliRunner against the fake LLM server over loopback: the real CLI,
the real provider SDK, real files; a subprocess would prove nothing more here.
"""

from __future__ import annotations

import contextlib
import os
import re
from pathlib import Path

import pytest
from clawbot.auth_profiles import AuthProfiles, Profile, key_fingerprint
from clawbot.cli.main import cli
from clawbot.credentials import save_credential
from clawbot.paths import StatePaths
from click.testing import CliRunner

KEY = "sk-doctor-secret-42"
SECRETS = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OLLAMA_API_KEY", "ANTHROPIC_BASE_URL", "OPENAI_BASE_URL", "OLLAMA_BASE_URL")


def doctor(home: Path, *args: str, env: dict[str, str] | None = None, config: str | None = None):
    """``clawbot doctor ARGS`` as a user with state dir ``home`` runs it; returns (exit code, output)."""
    if config is not None:
        (home / "clawbot.toml").write_text(config)
    environment: dict[str, str | None] = {k: None for k in os.environ if k.startswith("CLAWBOT_") or k in SECRETS}
    # nothing answers on this port: Ollama detection finds no local server
    environment.update(
        {"CLAWBOT_HOME": str(home), "HOME": str(home), "NO_COLOR": "1", "COLUMNS": "250", "OLLAMA_BASE_URL": "http://127.0.0.1:9/v1", **(env or {})}
    )
    with contextlib.chdir(home):
        result = CliRunner().invoke(cli, ["doctor", *args], env=environment, catch_exceptions=False)
    return result.exit_code, result.output


def lines(output: str, check: str) -> list[str]:
    return [line for line in output.splitlines() if re.match(rf"^(ok  |info|warn|FAIL) {check}\b", line)]


def openai_config(url: str, model: str = "openai/gpt-test") -> str:
    return f'[agents.defaults]\nmodel = "{model}"\n\n[providers.openai]\nbase_url = "{url}/v1"\n'


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    path.mkdir(mode=0o700)
    return path


def test_no_usable_model_is_a_failure_naming_only_installed_providers(home: Path) -> None:
    code, out = doctor(home, env={"CLAWBOT_DISABLE_PLUGINS": "anthropic"})
    assert code == 1, out
    assert lines(out, "model") == ["FAIL model    agent main: no usable model: No model is configured and none was found in the environment."]
    assert "clawbot onboard" in out and "OPENAI_API_KEY" in out
    # anthropic is not loaded: it is named only where the doctor says it is blocked
    assert [line for line in out.splitlines() if "anthropic" in line.lower()] == [line for line in out.splitlines() if "anthropic is blocked" in line]
    # memory is reported from the plugin that is installed, with the mode it searches in
    assert "memory provider 'sqlite' is active (plugin memory)" in out and "agent main: hybrid search" in out


def test_a_configured_model_and_where_its_key_comes_from_never_the_key(home: Path, fake_llm_thread) -> None:
    config = openai_config(fake_llm_thread.base_url)
    save_credential(StatePaths(home), "openai", KEY)
    code, out = doctor(home, config=config)
    assert lines(out, "model") == ["ok   model    agent main: openai/gpt-test (configured)"]
    assert lines(out, "key") == [f"ok   key      openai: key from {home}/credentials/openai.json (clawbot onboard)"]
    assert code == 0, out

    code, out = doctor(home, env={"OPENAI_API_KEY": "sk-env-secret"})
    assert lines(out, "key")[0].startswith("ok   key      openai: key from environment variable OPENAI_API_KEY (also: ")
    assert KEY not in out and "sk-env-secret" not in out and fake_llm_thread.requests == []  # no --live: nothing sent


def test_a_missing_key_and_a_misspelt_provider_are_failures_with_fixes(home: Path, fake_llm_thread) -> None:
    code, out = doctor(home, config=openai_config(fake_llm_thread.base_url))
    assert code == 1
    assert lines(out, "key") == ["FAIL key      openai: no API key found"]
    assert "fix: clawbot onboard --provider openai, or export OPENAI_API_KEY=..." in out

    code, out = doctor(home, config=openai_config(fake_llm_thread.base_url, "opnai/gpt-test"))
    assert code == 1
    assert "agent main: no usable model: model 'opnai/gpt-test': no installed provider is named 'opnai' (did you mean openai?)" in out


def test_live_sends_one_tiny_request_and_a_rejected_key_fails_clearly(home: Path, fake_llm_thread) -> None:
    save_credential(StatePaths(home), "openai", KEY)
    fake_llm_thread.reply("OK")
    code, out = doctor(home, "--live", config=openai_config(fake_llm_thread.base_url))
    assert lines(out, "live") == ["ok   live     openai/gpt-test answered one short request"]
    assert code == 0, out
    (request,) = fake_llm_thread.requests
    assert request.model == "gpt-test" and request.headers["authorization"] == f"Bearer {KEY}"

    fake_llm_thread.fail("auth")
    code, out = doctor(home, "--live")
    assert code == 1
    (line,) = lines(out, "live")
    assert line.startswith("FAIL live     openai/gpt-test did not answer: The model provider rejected the API key")
    assert "fix: clawbot onboard --provider openai" in out
    assert "Traceback" not in out and KEY not in out


def test_a_resting_key_is_shown_with_its_cause_and_end(home: Path, fake_llm_thread) -> None:
    save_credential(StatePaths(home), "openai", KEY)
    profiles = AuthProfiles([], home / "auth-state.json", default_key=lambda provider: KEY)
    profiles.cool_down(Profile("openai", "default", fingerprint=key_fingerprint(KEY)), "rate_limit", asked=600)
    code, out = doctor(home, config=openai_config(fake_llm_thread.base_url))
    (line,) = lines(out, "cooldown")
    assert re.match(r"warn cooldown openai key default rests until \d\d:\d\d:\d\d \(in 10 min\) \(rate limit\)", line), line
    assert "add another key under [[auth.profiles]]" in out


def test_workspace_missing_or_not_a_folder(home: Path, fake_llm_thread) -> None:
    save_credential(StatePaths(home), "openai", KEY)
    base = openai_config(fake_llm_thread.base_url)
    code, out = doctor(home, config=base.replace("[agents.defaults]\n", f'[agents.defaults]\nworkspace = "{home}/ws"\n'))
    assert lines(out, "workspace") == [f"warn workspace {home}/ws (agent main) does not exist yet"]
    assert f"fix: mkdir -p {home}/ws" in out
    (home / "ws").write_text("not a folder")
    code, out = doctor(home)
    assert code == 1 and lines(out, "workspace") == [f"FAIL workspace {home}/ws (agent main) is not a directory"]
    (home / "ws").unlink()
    (home / "ws").mkdir()
    code, out = doctor(home)
    assert code == 0 and lines(out, "workspace") == [f"ok   workspace {home}/ws (agent main)"]


def test_state_files_open_to_other_users_are_named_with_the_chmod(home: Path) -> None:
    (home / "sessions").mkdir(mode=0o700)
    transcript = home / "sessions" / "t.jsonl"
    transcript.write_text("{}\n")
    transcript.chmod(0o600)
    _, out = doctor(home)
    assert lines(out, "state")[-1] == f"ok   state    {home} is private (directories 0700, files 0600)"
    transcript.chmod(0o644)
    home.chmod(0o755)
    _, out = doctor(home)
    assert f"warn state    {home} (0755), {transcript} (0644) are readable by other users" in out
    assert f"fix: chmod -R go-rwx {home}" in out


TELEGRAM = '\n[channels.telegram]\nenabled = true\ntoken = "123:abc"\nallow_from = ["555"]\n'


@pytest.mark.parametrize(
    ("session", "level"),
    [
        ("", "ok  "),  # dm_scope = "main": the owner's alone
        ('[session]\ndm_scope = "per-peer"\nnon_owners_share_main = true\n', "ok  "),  # nobody shares a DM session
        ("[session]\nnon_owners_share_main = true\n", "warn"),
    ],
)
def test_doctor_warns_when_non_owners_can_write_into_the_main_session(home: Path, session: str, level: str) -> None:
    """The channels' own doors (allow_from here); senders approved by pairing are the pairing
    plugin's line (plugins/pairing/tests/test_pairing_doctor.py)."""
    code, out = doctor(home, config=f"{openai_config('http://127.0.0.1:9')}\n{session}{TELEGRAM}")
    [line] = lines(out, "sessions")
    assert line.startswith(f"{level} sessions"), out
    assert "telegram: channels.telegram.allow_from = 555" in line
    if level == "warn":
        assert "non-owners can write into the owner's main session" in line and "session.non_owners_share_main = true" in line
        assert "set session.non_owners_share_main = false" in out
    else:
        assert "the main session is the owner's alone" in line


def test_doctor_warns_when_no_plugin_answers_strangers_on_pairing(home: Path) -> None:
    """dm_policy "pairing" (the default) with the pairing plugin blocked: strangers are refused
    silently and nobody can be approved; the doctor says so, naming the channel."""
    config = f'{openai_config("http://127.0.0.1:9")}\n[channels.telegram]\nenabled = true\ntoken = "123:abc"\n'
    _, out = doctor(home, env={"CLAWBOT_DISABLE_PLUGINS": "pairing"}, config=config)
    [line] = lines(out, "access")
    assert line.startswith('warn access   telegram: dm_policy = "pairing" but no plugin answers strangers'), out
    assert "install or unblock the pairing plugin" in out
    _, out = doctor(home, config=config)
    assert lines(out, "access") == []


def test_doctor_says_nothing_of_sessions_when_only_the_owner_can_write(home: Path) -> None:
    _, out = doctor(home, config=openai_config("http://127.0.0.1:9") + "\n[session]\nnon_owners_share_main = true\n")
    assert lines(out, "sessions") == []


@pytest.mark.parametrize(
    ("blocked", "extra", "check", "says"),
    [
        ("control", "", "control", "the control API is off: no installed plugin serves it (clawbot-control is blocked or not installed)"),
        ("automation", "", "automation", "heartbeats are configured (main) but no plugin runs heartbeats: none will run"),
        ("automation", "\n[cron]\nenabled = true\n", "automation", "[cron] is configured but no plugin runs cron jobs: none will run"),
    ],
)
def test_what_the_configuration_turns_on_but_no_plugin_serves_is_a_warning(
    home: Path, fake_llm_thread, blocked: str, extra: str, check: str, says: str
) -> None:
    config = openai_config(fake_llm_thread.base_url) + extra
    code, out = doctor(home, env={"OPENAI_API_KEY": KEY, "CLAWBOT_DISABLE_PLUGINS": blocked}, config=config)
    assert any(line.startswith(f"warn {check}") and says in line for line in lines(out, check)), out
    # with every plugin in place, nothing of the kind is said
    code, out = doctor(home, env={"OPENAI_API_KEY": KEY}, config=config)
    assert says not in out, out
