"""`clawbot onboard` end to end: the real CLI, the real OpenAI SDK, the fake server over loopback."""

from __future__ import annotations

import json
import stat
import subprocess
import sys
from pathlib import Path

from clawbot.credentials import save_credential
from clawbot.paths import StatePaths
from clawbot.testing.cli import invoke_cli, subprocess_env

REPO_ROOT = Path(__file__).resolve().parents[3]

KEY = "sk-onboard-secret-123"
# empty values never win over stored credentials, and keep the developer's own settings out
CLEAN = {"OPENAI_BASE_URL": "", "OLLAMA_API_KEY": "", "ANTHROPIC_BASE_URL": ""}


def cli(*args: str, home: Path, env: dict[str, str] | None = None, stdin: str | None = None):
    return invoke_cli(*args, home=home, env={**CLEAN, **(env or {})}, stdin=stdin)


def onboard(home: Path, url: str, *extra: str, key: str = KEY):
    return cli("onboard", "--provider", "openai", "--api-key", key, "--base-url", f"{url}/v1", "--model", "gpt-test", *extra, home=home)


def run_cli(*args: str, home: Path, cwd: Path | None = None, env: dict[str, str] | None = None, stdin: str | None = None):
    """The real ``clawbot`` in a subprocess, as a user runs it."""
    command = [sys.executable, "-m", "clawbot.cli.main", *args]
    return subprocess.run(command, cwd=cwd or home, env=subprocess_env(home, env), input=stdin, capture_output=True, text=True, timeout=60)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_non_interactive_onboarding_stores_the_key_privately_and_the_agent_uses_it(tmp_path: Path, fake_llm_thread) -> None:
    fake_llm_thread.reply("OK").reply("Hello from the stored key.")
    result = onboard(tmp_path, fake_llm_thread.base_url)
    assert result.returncode == 0, result.stderr
    assert "openai/gpt-test answered" in result.stdout
    assert KEY not in result.stdout + result.stderr

    stored = tmp_path / "credentials" / "openai.json"
    assert mode(stored.parent) == 0o700 and mode(stored) == 0o600
    assert json.loads(stored.read_text()) == {"api_key": KEY, "base_url": f"{fake_llm_thread.base_url}/v1"}
    assert [p.name for p in stored.parent.iterdir()] == ["openai.json"]  # no temp file left behind
    assert (tmp_path / "clawbot.toml").read_text() == '[agents.defaults.model]\nprimary = "openai/gpt-test"\n'
    assert all(KEY not in p.read_text() for p in tmp_path.rglob("*.toml"))

    check = fake_llm_thread.requests[0]
    assert check.headers["authorization"] == f"Bearer {KEY}"
    assert check.model == "gpt-test"

    turn = cli("agent", "-m", "hi", "--json", home=tmp_path)  # no key in the environment at all
    assert turn.returncode == 0, turn.stderr
    payload = json.loads(turn.stdout)
    assert payload["model"] == "openai/gpt-test" and payload["reply"] == "Hello from the stored key."
    assert fake_llm_thread.requests[1].headers["authorization"] == f"Bearer {KEY}"


def test_interactive_onboarding_reads_the_answers_from_stdin(tmp_path: Path, fake_llm_thread) -> None:
    answers = f"openai\n{KEY}\n{fake_llm_thread.base_url}/v1\ngpt-test\n"
    # a process of its own: the key is typed at a hidden prompt, which click's runner would echo
    result = run_cli("onboard", home=tmp_path, env=CLEAN, stdin=answers)
    assert result.returncode == 0, result.stderr
    for prompt in ("Model provider", "API key", "Base URL", "Default model [gpt-5]"):
        assert prompt in result.stdout
    assert KEY not in result.stdout + result.stderr
    assert json.loads((tmp_path / "credentials" / "openai.json").read_text())["api_key"] == KEY
    assert 'primary = "openai/gpt-test"' in (tmp_path / "clawbot.toml").read_text()
    assert fake_llm_thread.requests[0].headers["authorization"] == f"Bearer {KEY}"


def test_a_different_default_model_is_kept_unless_set_default_and_the_edit_keeps_comments(tmp_path: Path, fake_llm_thread) -> None:
    config = tmp_path / "clawbot.toml"  # the file onboard writes (CLAWBOT_HOME is tmp_path)
    config.write_text('# my settings\n[agents.defaults]\nthinking = "low"\nmodel = "anthropic/claude-opus-4-5"  # mine\n')
    before = config.read_text()
    result = onboard(tmp_path, fake_llm_thread.base_url, "--no-check")
    assert result.returncode == 0, result.stderr
    assert config.read_text() == before
    assert "keeps its default model anthropic/claude-opus-4-5" in result.stdout and "--set-default" in result.stdout
    assert fake_llm_thread.requests == []  # --no-check

    result = onboard(tmp_path, fake_llm_thread.base_url, "--no-check", "--set-default")
    assert result.returncode == 0, result.stderr
    assert config.read_text() == before.replace("anthropic/claude-opus-4-5", "openai/gpt-test")
    assert f"Set the default model openai/gpt-test in {config}" in result.stdout
    assert mode(config) == 0o600


def test_onboarding_from_a_clone_of_the_repository_is_what_the_next_run_uses(tmp_path: Path, fake_llm_thread) -> None:
    """The example clawbot.toml at the root of a clone (primary = "") is not read: the model
    onboard saved is the one `config show` and the next `clawbot agent` name."""
    home = tmp_path / "home"
    example = REPO_ROOT / "clawbot.toml"
    before = example.read_text()
    # a process of its own: onboard creates the state dir itself, and its mode is checked below
    result = run_cli(
        "onboard",
        "--provider",
        "openai",
        "--api-key",
        KEY,
        "--base-url",
        f"{fake_llm_thread.base_url}/v1",
        "--model",
        "gpt-test",
        "--no-check",
        home=home,
        cwd=REPO_ROOT,
        env=CLEAN,
    )
    assert result.returncode == 0, result.stderr
    written = home / "clawbot.toml"
    assert 'primary = "openai/gpt-test"' in written.read_text()
    assert "takes precedence" not in result.stdout and "does not read the model" not in result.stdout
    assert f"note: {example} is ignored" in result.stderr
    assert example.read_text() == before
    # state dir and written file are private from the start
    assert mode(home) == 0o700 and mode(written) == 0o600

    shown = run_cli("config", "show", "--json", home=home, cwd=REPO_ROOT, env=CLEAN)
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout)["agents"]["defaults"]["model"]["primary"] == "openai/gpt-test"

    fake_llm_thread.reply("from the onboarded model")
    turn = run_cli("agent", "-m", "hi", home=home, cwd=REPO_ROOT, env=CLEAN)
    assert turn.returncode == 0, turn.stderr
    assert f"clawbot: agent main on openai/gpt-test; config {written};" in turn.stderr
    assert turn.stdout == "from the onboarded model\n"
    assert fake_llm_thread.requests[-1].model == "gpt-test"


def test_onboard_says_when_a_file_named_by_clawbot_config_is_used_instead(tmp_path: Path, fake_llm_thread) -> None:
    home, named = tmp_path / "home", tmp_path / "team" / "clawbot.toml"
    named.parent.mkdir()
    named.write_text('[agents.defaults]\nmodel = "anthropic/claude-opus-4-5"\n')
    result = cli(
        "onboard", "--provider", "openai", "--api-key", KEY, "--base-url", f"{fake_llm_thread.base_url}/v1", "--model", "gpt-test", "--no-check",
        home=home,
        env={"CLAWBOT_CONFIG": str(named)},
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    written = home / "clawbot.toml"
    assert 'primary = "openai/gpt-test"' in written.read_text()
    assert named.read_text() == '[agents.defaults]\nmodel = "anthropic/claude-opus-4-5"\n'
    assert f"{named} is named by $CLAWBOT_CONFIG and is used instead of {written}" in result.stdout
    assert f"in {named}:" in result.stdout and 'primary = "openai/gpt-test"' in result.stdout


def test_a_rejected_key_is_not_stored_and_a_working_stored_key_is_kept(tmp_path: Path, fake_llm_thread) -> None:
    fake_llm_thread.reply("OK")
    assert onboard(tmp_path, fake_llm_thread.base_url).returncode == 0
    stored = tmp_path / "credentials" / "openai.json"
    assert json.loads(stored.read_text())["api_key"] == KEY

    fake_llm_thread.fail("auth")
    result = onboard(tmp_path, fake_llm_thread.base_url, key="sk-typo")
    assert result.returncode == 1
    assert "The model provider rejected the API key" in result.stderr
    assert f"The key was not stored; the one in {stored} is kept." in result.stderr
    assert "clawbot onboard --provider openai --api-key" in result.stderr and "--no-check" in result.stderr
    assert "Traceback" not in result.stderr and "sk-typo" not in result.stdout + result.stderr
    assert json.loads(stored.read_text())["api_key"] == KEY  # the working key is still there
    assert fake_llm_thread.requests[1].headers["authorization"] == "Bearer sk-typo"  # checked before storing


def test_a_rejected_first_key_stores_nothing(tmp_path: Path, fake_llm_thread) -> None:
    fake_llm_thread.fail("auth")
    result = onboard(tmp_path, fake_llm_thread.base_url)
    assert result.returncode == 1
    assert "Nothing was stored." in result.stderr and KEY not in result.stdout + result.stderr
    assert not (tmp_path / "credentials" / "openai.json").exists()
    assert not (tmp_path / "clawbot.toml").exists()


def test_a_credential_file_readable_by_others_is_refused(tmp_path: Path) -> None:
    stored = save_credential(StatePaths(tmp_path), "openai", KEY)
    stored.chmod(0o644)
    for args in (("agent", "-m", "hi"), ("onboard", "--provider", "openai", "--api-key", "x", "--model", "m")):
        result = cli(*args, home=tmp_path)
        assert result.returncode == 2, args
        assert str(stored) in result.stderr and f"chmod 600 {stored}" in result.stderr
        assert "0644" in result.stderr and "Traceback" not in result.stderr
        assert KEY not in result.stderr


def test_a_real_environment_key_wins_over_the_stored_one(tmp_path: Path, fake_llm_thread) -> None:
    assert onboard(tmp_path, fake_llm_thread.base_url, "--no-check").returncode == 0
    turn = cli("agent", "-m", "hi", "--json", home=tmp_path, env={"OPENAI_API_KEY": "sk-from-env"})
    assert turn.returncode == 0, turn.stderr
    # the key from the environment, the base URL still from the store
    assert fake_llm_thread.requests[0].headers["authorization"] == "Bearer sk-from-env"
