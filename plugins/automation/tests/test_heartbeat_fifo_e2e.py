"""A HEARTBEAT.md the agent replaced with a FIFO does not stall the gateway.

A real ``clawbot run`` (the fake LLM, the control API as its channel) with heartbeats every
minute, so one is due as soon as it starts: the heartbeat meets the FIFO, skips the slot
saying why in the log, and the gateway keeps answering: ``clawbot agent`` gets its reply
through the API and the health check answers.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from clawbot.control.client import find_gateway
from clawbot.testing.cli import gateway_log, subprocess_env

TIMEOUT_S = 30.0


def write_config(home: Path, base_url: str) -> Path:
    workspace = home / "ws"
    workspace.mkdir()
    (home / "clawbot.toml").write_text(
        f'[agents.defaults]\nworkspace = "{workspace}"\n\n[agents.defaults.model]\nprimary = "openai/gpt-test"\n\n'
        "[agents.defaults.heartbeat]\nevery_minutes = 1\n\n"
        f'[providers.openai]\nbase_url = "{base_url}/v1"\napi_key = "sk-test"\n\n'
        "[channels.terminal]\nenabled = false\n\n[gateway]\nport = 0\n",
        encoding="utf-8",
    )
    return workspace


def wait_for(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + TIMEOUT_S
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"waited {TIMEOUT_S:.0f} s for {what}")
        time.sleep(0.1)


def healthy(home: Path) -> bool:
    client = find_gateway(home)
    return client is not None and client.call("GET", "/v1/health")[0] == 200


@pytest.fixture
def gateway_with_a_fifo(tmp_path: Path, fake_llm_thread) -> Iterator[subprocess.Popen[str]]:
    workspace = write_config(tmp_path, fake_llm_thread.base_url)
    fifo = workspace / "HEARTBEAT.md"
    os.mkfifo(fifo)
    process = subprocess.Popen(
        [sys.executable, "-m", "clawbot.cli.main", "run"],
        cwd=tmp_path,
        env=subprocess_env(tmp_path),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        yield process
    finally:
        try:  # a gateway stuck reading the FIFO gets its end of file, so it can stop
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        except OSError:
            pass
        if process.poll() is None:
            process.send_signal(signal.SIGINT)
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=5)


def test_a_fifo_heartbeat_md_is_skipped_and_every_other_channel_is_answered(tmp_path: Path, fake_llm_thread, gateway_with_a_fifo) -> None:
    log = gateway_log(tmp_path)
    wait_for(lambda: healthy(tmp_path), "the gateway's control API")
    wait_for(lambda: log.exists() and "HEARTBEAT.md" in log.read_text(encoding="utf-8"), "the heartbeat to try HEARTBEAT.md")
    assert "it is not a regular file (a FIFO)" in log.read_text(encoding="utf-8")

    fake_llm_thread.reply("answered while HEARTBEAT.md is a FIFO")
    asked = subprocess.run(
        [sys.executable, "-m", "clawbot.cli.main", "agent", "-m", "hello"],
        cwd=tmp_path,
        env=subprocess_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert asked.returncode == 0, asked.stderr[-2000:]
    assert asked.stdout == "answered while HEARTBEAT.md is a FIFO\n"
    assert healthy(tmp_path)
    assert gateway_with_a_fifo.poll() is None
