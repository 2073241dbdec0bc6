"""Provider errors in the real CLI (in process): ``clawbot run`` with the terminal channel fed on stdin and
``clawbot agent``, the official SDKs, the fake LLM server. Whatever the error, the terminal
shows a short message and no traceback; the log file under the state dir keeps the traceback;
``--verbose`` shows it on the terminal too."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from clawbot.testing.cli import invoke_cli

# error kind -> (fake fault and its options, or None for a refused connection; what the chat says)
ERRORS = {
    "401": (("auth", {}), "rejected the API key"),
    "404": (("unknown_model", {}), "has no model"),
    "429": (("rate_limit", {"retry_after": 0}), "rate-limiting"),
    "500": (("server_error", {"retry_after": 0}), "internal error"),
    "529/503": (("overloaded", {"retry_after": 0}), "overloaded"),
    "refused": (None, "Could not reach the model provider at http://127.0.0.1:"),
    "dropped stream": (("dropped_stream", {}), "dropped the connection in the middle of the answer"),
    "broken stream JSON": (("broken_stream_json", {}), "garbled answer"),
    "stall": (("stalled_stream", {"delay": 60}), "stopped sending in the middle of the answer"),
}
MODEL = {"openai": "gpt-test", "anthropic": "claude-test"}


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def set_up(home: Path, fake, provider: str, error: str) -> None:
    fault, _ = ERRORS[error]
    base_url = fake.base_url if fault is not None else f"http://127.0.0.1:{closed_port()}"
    if fault is not None:
        kind, options = fault
        fake.fail(kind, times=20, **options)
    suffix = "/v1" if provider == "openai" else ""
    stall = "stream_idle_timeout_s = 0.3\n" if error == "stall" else ""
    (home / "clawbot.toml").write_text(
        f'[agents.defaults.model]\nprimary = "{provider}/{MODEL[provider]}"\n\n'
        f'[providers.{provider}]\nbase_url = "{base_url}{suffix}"\napi_key = "sk-test"\n{stall}'
    )


def log_text(home: Path, name: str = "clawbot") -> str:
    """The log of ``clawbot agent`` (``clawbot``) or of the gateway, ``clawbot run`` (``gateway``)."""
    return (home / "logs" / f"{name}.log").read_text(encoding="utf-8")


CASES = [("openai", error) for error in ERRORS] + [("anthropic", error) for error in ("404", "broken stream JSON")]


@pytest.mark.parametrize(("provider", "error"), CASES)
def test_run_shows_a_provider_error_without_a_traceback_and_logs_it(tmp_path: Path, fake_llm_thread, provider, error) -> None:
    set_up(tmp_path, fake_llm_thread, provider, error)

    result = invoke_cli("run", home=tmp_path, stdin="hello\n")

    assert result.returncode == 0, result.stderr
    assert ERRORS[error][1] in result.stdout, result.stdout
    assert "Traceback" not in result.stdout + result.stderr, result.stderr
    assert 'File "' not in result.stderr  # no part of one either
    assert "ERROR clawbot" not in result.stdout + result.stderr  # log lines go to the log file
    assert "Traceback (most recent call last)" in log_text(tmp_path, "gateway")


@pytest.mark.parametrize("error", ["404", "broken stream JSON"])
def test_run_verbose_shows_the_traceback_on_the_terminal(tmp_path: Path, fake_llm_thread, error) -> None:
    set_up(tmp_path, fake_llm_thread, "openai", error)

    result = invoke_cli("run", "--verbose", home=tmp_path, stdin="hello\n")

    assert result.returncode == 0 and ERRORS[error][1] in result.stdout
    assert "Traceback (most recent call last)" in result.stderr
    assert "Traceback (most recent call last)" in log_text(tmp_path, "gateway")


@pytest.mark.parametrize("error", ["404", "refused"])
def test_agent_shows_a_provider_error_without_a_traceback_and_logs_it(tmp_path: Path, fake_llm_thread, error) -> None:
    set_up(tmp_path, fake_llm_thread, "openai", error)

    result = invoke_cli("agent", "-m", "hello", home=tmp_path)
    verbose = invoke_cli("agent", "--verbose", "-m", "hello", home=tmp_path)

    assert result.returncode == 1 and ERRORS[error][1] in result.stderr, result.stderr
    assert "Traceback" not in result.stdout + result.stderr, result.stderr
    assert "Traceback (most recent call last)" in log_text(tmp_path)
    assert verbose.returncode == 1 and "Traceback (most recent call last)" in verbose.stderr
