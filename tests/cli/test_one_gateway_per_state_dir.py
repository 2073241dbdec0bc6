"""One ``clawbot run`` per state dir: a second one is refused, naming the first, instead of
answering the same chats twice and hiding the first one's control API."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

from clawbot.control.endpoint import live_endpoint
from clawbot.testing.cli import subprocess_env


def _config(home: Path, base_url: str) -> None:
    (home / "clawbot.toml").write_text(
        f'[agents.defaults.model]\nprimary = "openai/gpt-test"\n\n[providers.openai]\nbase_url = "{base_url}/v1"\napi_key = "sk-test"\n\n[gateway]\nport = 0\n',
        encoding="utf-8",
    )


def _run(home: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "clawbot.cli.main", "run"],
        cwd=home,
        env=subprocess_env(home),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_a_second_gateway_on_the_same_state_dir_is_refused_and_names_the_first(tmp_path: Path, fake_llm_thread) -> None:
    _config(tmp_path, fake_llm_thread.base_url)
    first = _run(tmp_path)
    try:
        deadline = time.monotonic() + 30
        while (endpoint := live_endpoint(tmp_path)) is None:
            assert first.poll() is None, first.communicate()
            assert time.monotonic() < deadline, "the first gateway never listened"
            time.sleep(0.05)
        second = _run(tmp_path)
        out, err = second.communicate(timeout=30)
        assert second.returncode == 2, out + err
        assert f"A clawbot gateway already runs on {tmp_path} (pid {first.pid}, http://127.0.0.1:{endpoint['port']})" in err
        assert "Traceback" not in out + err
        assert live_endpoint(tmp_path) == endpoint and first.poll() is None  # the first is untouched
    finally:
        first.send_signal(signal.SIGTERM)
        first.communicate(timeout=30)
    third = _run(tmp_path)  # the lock goes with the process that held it
    try:
        deadline = time.monotonic() + 30
        while live_endpoint(tmp_path) is None:
            assert third.poll() is None, third.communicate()
            assert time.monotonic() < deadline
            time.sleep(0.05)
    finally:
        third.send_signal(signal.SIGTERM)
        third.communicate(timeout=30)
