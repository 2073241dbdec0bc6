"""What a user sees before anything is configured, or when the file is broken."""

from __future__ import annotations

from pathlib import Path

from .clihelpers import run_cli


def test_run_without_any_model_prints_the_options_and_exits(tmp_path: Path) -> None:
    result = run_cli("run", home=tmp_path, stdin="hello\n")
    assert result.returncode == 1
    assert "No model is configured" in result.stderr
    assert "ANTHROPIC_API_KEY" in result.stderr and "OPENAI_API_KEY" in result.stderr and "ollama" in result.stderr
    assert "Traceback" not in result.stderr


def test_agent_without_any_model_prints_the_same_short_message(tmp_path: Path) -> None:
    result = run_cli("agent", "-m", "hi", home=tmp_path)
    assert result.returncode == 1
    assert "No model is configured" in result.stderr and "Traceback" not in result.stderr


def test_model_naming_an_unknown_provider_says_which_are_installed(tmp_path: Path) -> None:
    (tmp_path / "clawbot.toml").write_text('[agents.defaults.model]\nprimary = "mistral/large"\n')
    result = run_cli("agent", "-m", "hi", home=tmp_path)
    assert result.returncode == 1
    assert "no installed provider is named 'mistral'" in result.stderr
    assert "anthropic" in result.stderr and "openai" in result.stderr


def test_broken_config_stops_run_and_agent_with_exit_code_2(tmp_path: Path) -> None:
    (tmp_path / "clawbot.toml").write_text('[logging]\nlevel = "chatty"\n[plugins]\nallow = "terminal"\n')
    for args in (("run",), ("agent", "-m", "hi"), ("config", "validate")):
        result = run_cli(*args, home=tmp_path, stdin="")
        assert result.returncode == 2, args
        assert "logging.level" in result.stderr and "plugins.allow" in result.stderr
        assert "2 problems" in result.stderr
        assert "Traceback" not in result.stderr


def test_a_config_the_plugins_cannot_satisfy_stops_every_command_with_one_message(tmp_path: Path) -> None:
    """The file parses, but no installed plugin offers what it names: found while the kernel
    starts, which for some commands is inside the event loop; still one message, exit 2."""
    (tmp_path / "clawbot.toml").write_text('[agents.defaults.compaction]\nstrategy = "gamma"\n[memory]\nprovider = "delta"\n')
    for args in (("agent", "-m", "hi"), ("run",), ("memory", "status"), ("context",)):
        result = run_cli(*args, home=tmp_path, stdin="", env={"OPENAI_API_KEY": "sk-test"})
        assert result.returncode == 2, (args, result.stderr)
        assert "agents.defaults.compaction.strategy" in result.stderr and "'gamma'" in result.stderr, args
        assert "memory.provider" in result.stderr, args
        assert "Traceback" not in result.stderr and "never retrieved" not in result.stderr, (args, result.stderr)


def test_unknown_agent_is_refused(tmp_path: Path) -> None:
    result = run_cli("agent", "-m", "hi", "--agent", "ghost", home=tmp_path, env={"OPENAI_API_KEY": "sk-test"})
    assert result.returncode == 2
    assert "unknown agent 'ghost'" in result.stderr and "main" in result.stderr


def test_doctor_reports_a_broken_config_with_a_fix(tmp_path: Path) -> None:
    (tmp_path / "clawbot.toml").write_text("[agents.defaults]\nmax_iterations = -\n")
    result = run_cli("doctor", home=tmp_path)
    assert result.returncode == 1
    assert "not valid TOML" in result.stdout
    assert "clawbot config validate" in result.stdout


def test_trace_env_logs_each_hook_call_with_plugin_and_duration(tmp_path: Path) -> None:
    result = run_cli("plugins", "list", "--json", home=tmp_path, env={"CLAWBOT_TRACE_PLUGINS": "1"})
    assert result.returncode == 0
    lines = [line for line in result.stderr.splitlines() if "hook clawbot_config_schema" in line]
    assert any("plugin=terminal" in line and " ms" in line for line in lines), result.stderr
