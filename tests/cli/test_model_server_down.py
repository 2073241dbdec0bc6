"""With the model server down, the terminal gets one line saying so, the log file the rest,
and a server that refuses the connection is given up on after a bounded number of attempts.

Real ``clawbot run`` (its terminal chat fed from a pipe) and ``clawbot agent --local``
processes, the real OpenAI plugin and SDK, aimed at a loopback port where a socket is bound
but nothing listens: every connection is refused, as when the model server is not running.
"""

from __future__ import annotations

import re
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from .clihelpers import run_cli

LOG_LINE = re.compile(r"^(?:\S+ )?(DEBUG|INFO|WARNING|ERROR|CRITICAL) [\w.]+: ", re.M)

RUNS = {
    # what the user runs: (arguments, stdin, exit code, the log file it keeps)
    "clawbot run, stdin piped": (("run",), "hello?\n", 0, "gateway.log"),
    "clawbot agent --local": (("agent", "--local", "-m", "hello?"), None, 1, "clawbot.log"),
}


@pytest.fixture
def refused_url() -> Iterator[str]:
    """A loopback port held by a socket that never listens: connections to it are refused."""
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        yield f"http://127.0.0.1:{held.getsockname()[1]}/v1"


def _configure(home: Path, base_url: str) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "clawbot.toml").write_text(
        f'[agents.defaults.model]\nprimary = "openai/gpt-test"\n\n[providers.openai]\nbase_url = "{base_url}"\napi_key = "sk-test"\n\n'
        "[gateway]\nport = 0\n\n[channels.webchat]\nenabled = false\n"
    )


@pytest.mark.parametrize("how", RUNS)
def test_a_refused_model_server_is_one_line_on_the_terminal_and_the_rest_in_the_log(tmp_path: Path, refused_url: str, how: str) -> None:
    args, stdin, code, log_name = RUNS[how]
    _configure(tmp_path, refused_url)
    result = run_cli(*args, home=tmp_path, stdin=stdin, timeout=120)
    shown = result.stdout + result.stderr
    assert result.returncode == code, shown
    friendly = f"Could not reach the model provider at {refused_url}. Check the network or the base_url."
    told = [line for line in shown.splitlines() if not line.startswith("clawbot: agent main on openai/gpt-test")]  # the start-up line
    assert len(told) == 1 and told[0].endswith(friendly), shown
    assert not LOG_LINE.search(shown) and "Traceback" not in shown
    log = (tmp_path / "logs" / log_name).read_text(encoding="utf-8")
    # the log keeps every attempt: two in all (nothing listening will not listen a second later)
    assert log.count("connection: Connection error.") == 2 and log.count("; retrying in 0.5 s") == 1
    assert "Traceback" in log and "model openai/gpt-test unavailable and no fallback model is left" in log


def test_verbose_shows_the_log_lines_on_the_terminal_too(tmp_path: Path, refused_url: str) -> None:
    _configure(tmp_path, refused_url)
    result = run_cli("agent", "--local", "--verbose", "-m", "hello?", home=tmp_path, timeout=120)
    assert result.returncode == 1
    assert "WARNING clawbot.agent.failover: " in result.stderr and "Traceback" in result.stderr
