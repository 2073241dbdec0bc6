"""A ``clawbot run`` whose control or automation plugin is blocked says so, and the commands
that ask it (``status``, ``agent -m``, ``doctor``) say what is missing instead of taking the
gateway for dead or its heartbeats for running.

Everything runs as the user would: the gateway, ``clawbot status``, ``clawbot agent`` and
``clawbot doctor`` are subprocesses against the fake LLM.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from clawbot.control.client import find_gateway
from clawbot.testing import install_distribution
from clawbot.testing.cli import subprocess_env

#: a channel that only says it started, so the gateway has something to serve besides the API
IDLE_CHANNEL = """\
import asyncio
import os
from pathlib import Path

from clawbot import Channel, hookimpl


class IdleChannel(Channel):
    name = "idle"

    async def start(self, sink):
        Path(os.environ["IDLE_READY"]).write_text("up")
        await asyncio.Event().wait()

    async def send(self, message):
        pass


@hookimpl
def clawbot_channels(ctx):
    return [IdleChannel()]
"""


def _config(home: Path, base_url: str) -> None:
    (home / "clawbot.toml").write_text(
        f'[agents.defaults.model]\nprimary = "openai/gpt-test"\n\n[providers.openai]\nbase_url = "{base_url}/v1"\napi_key = "sk-test"\n\n'
        "[channels.terminal]\nenabled = false\n\n[gateway]\nport = 0\n",
        encoding="utf-8",
    )


class Gateway:
    """``clawbot run`` in a subprocess with ``blocked`` plugins, and the commands that ask it."""

    def __init__(self, home: Path, site: Path, blocked: str) -> None:
        self.home, self.site = home, site
        self.env = {"CLAWBOT_DISABLE_PLUGINS": blocked, "IDLE_READY": str(home / "ready")}
        self.process = subprocess.Popen(
            [sys.executable, "-m", "clawbot.cli.main", "run"],
            cwd=home,
            env=subprocess_env(home, self.env, extra_path=site),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.stderr = ""

    def wait_until_up(self) -> None:
        deadline = time.monotonic() + 30
        while not (self.home / "ready").exists():
            assert self.process.poll() is None, self.process.communicate()
            assert time.monotonic() < deadline, "the gateway never started its channel"
            time.sleep(0.05)

    def clawbot(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "clawbot.cli.main", *args],
            cwd=self.home,
            env=subprocess_env(self.home, self.env, extra_path=self.site),
            capture_output=True,
            text=True,
            timeout=90,
        )

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            _, self.stderr = self.process.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            _, self.stderr = self.process.communicate(timeout=10)


@pytest.fixture
def start_gateway(tmp_path: Path, fake_llm_thread) -> Iterator:
    site = tmp_path / "site"
    install_distribution(site, "clawbot-idle", entry_points={"idle": "idle_plugin"}, modules={"idle_plugin.py": IDLE_CHANNEL})
    _config(tmp_path, fake_llm_thread.base_url)
    started: list[Gateway] = []

    def start(blocked: str) -> Gateway:
        gateway = Gateway(tmp_path, site, blocked)
        started.append(gateway)
        gateway.wait_until_up()
        return gateway

    yield start
    for gateway in started:
        gateway.stop()


def test_a_gateway_without_its_control_api_says_so_and_is_not_taken_for_dead(start_gateway, fake_llm_thread) -> None:
    gateway = start_gateway("control")

    status = gateway.clawbot("status")
    assert status.returncode == 1
    assert f"A gateway runs (pid {gateway.process.pid}) but has no control API" in status.stdout, status.stdout
    assert "No gateway is running" not in status.stdout

    # no second agent in process against the gateway's sessions, unless asked for
    agent = gateway.clawbot("agent", "-m", "hi")
    assert agent.returncode == 2, agent.stdout + agent.stderr
    assert f"(pid {gateway.process.pid}) but has no control API" in agent.stderr and "--local" in agent.stderr
    assert fake_llm_thread.requests == []

    doctor = gateway.clawbot("doctor")
    assert "the control API is off: no installed plugin serves it (clawbot-control is blocked or not installed)" in doctor.stdout, doctor.stdout

    gateway.stop()
    assert "clawbot: the control API is off: no installed plugin serves it (clawbot-control is blocked or not installed)" in gateway.stderr, gateway.stderr


def test_a_gateway_without_its_automation_plugin_shows_no_heartbeats_running(start_gateway) -> None:
    gateway = start_gateway("automation")
    deadline = time.monotonic() + 30
    while (client := find_gateway(gateway.home)) is None or client.call("GET", "/v1/health")[0] != 200:
        assert time.monotonic() < deadline, "the control API never answered"
        time.sleep(0.05)

    status = gateway.clawbot("status")
    assert status.returncode == 0, status.stdout + status.stderr
    assert "heartbeats (main): not running: no plugin runs heartbeats; 0 runs, 0 tokens" in status.stdout, status.stdout
    assert "every 30 min" not in status.stdout

    code, answer = client.call("POST", "/v1/cron/daily/run")
    assert code == 503
    assert answer["error"] == (
        "cron jobs do not run in this gateway: cron.enabled = false, or no installed plugin runs them (clawbot-automation is blocked or not installed)"
    )

    doctor = gateway.clawbot("doctor")
    assert "heartbeats are configured (main) but no plugin runs heartbeats: none will run" in doctor.stdout, doctor.stdout
