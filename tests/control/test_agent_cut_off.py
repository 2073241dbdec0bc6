"""``clawbot agent -m`` never exits 0 without its reply: a turn cut off says what happened in
one line and exits non-zero, whatever cut it off (the gateway killed, the gateway stopping
past its grace, the message dropped past ``gateway.queue.cap``, Ctrl-C in process)."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from clawbot.control.client import find_gateway
from clawbot.testing.cli import subprocess_env

from .test_agent_through_gateway import write_config

TIMEOUT = 30.0


def until(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + TIMEOUT
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def agent(home: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "clawbot.cli.main", "agent", *args],
        cwd=home,
        env=subprocess_env(home),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.fixture
def start_gateway(tmp_path: Path, fake_llm_thread) -> Iterator[Callable[[str], subprocess.Popen[str]]]:
    started: list[subprocess.Popen[str]] = []

    def start(extra_config: str = "") -> subprocess.Popen[str]:
        write_config(tmp_path, fake_llm_thread.base_url)
        with (tmp_path / "clawbot.toml").open("a", encoding="utf-8") as config:
            config.write(extra_config)
        process = subprocess.Popen(
            [sys.executable, "-m", "clawbot.cli.main", "run"],
            cwd=tmp_path,
            env=subprocess_env(tmp_path),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        started.append(process)

        def up() -> bool:
            client = find_gateway(tmp_path)
            return process.poll() is None and client is not None and client.call("GET", "/v1/health")[0] == 200

        until(up, "the gateway to serve its API")
        return process

    yield start
    for process in started:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=10)


def finished(process: subprocess.Popen[str]) -> tuple[int, str, str]:
    out, err = process.communicate(timeout=TIMEOUT)
    return process.returncode, out, err


def said(err: str) -> list[str]:
    """What the client said about its turn: its stderr but the start line (agent, model)."""
    return [line for line in err.splitlines() if line.strip() and not line.startswith("clawbot: agent ")]


def killed(home: Path, gateway: subprocess.Popen[str], llm) -> tuple[int, str, str]:
    client = agent(home, "-m", "a question the gateway dies over")
    until(lambda: len(llm.requests) == 1, "the turn to ask the model")
    gateway.send_signal(signal.SIGKILL)
    return finished(client)


def stopped_past_the_grace(home: Path, gateway: subprocess.Popen[str], llm) -> tuple[int, str, str]:
    client = agent(home, "-m", "a question the gateway stops during")
    until(lambda: len(llm.requests) == 1, "the turn to ask the model")
    gateway.send_signal(signal.SIGTERM)
    return finished(client)


def dropped_past_the_cap(home: Path, gateway: subprocess.Popen[str], llm) -> tuple[int, str, str]:
    first = agent(home, "-m", "a first question")
    until(lambda: len(llm.requests) == 1, "the first turn to ask the model")
    waiting = [agent(home, "-m", "a second question"), agent(home, "-m", "a third question")]
    until(lambda: any(p.poll() is not None for p in waiting), "one of the two waiting to be dropped")
    (dropped,) = [p for p in waiting if p.poll() is not None]
    for process in (first, *waiting):
        if process is not dropped:
            process.kill()
            process.communicate(timeout=10)
    return finished(dropped)


@pytest.mark.parametrize(
    ("cut_off", "config", "line"),
    [
        (killed, "", "the gateway stopped before the turn finished"),
        (stopped_past_the_grace, "shutdown_grace_s = 0.5\n", "stopped before"),
        (dropped_past_the_cap, '[gateway.queue]\nmode = "followup"\ncap = 1\n', "gateway.queue.cap"),
    ],
    ids=["gateway killed", "stopping past the grace", "dropped past the cap"],
)
def test_a_turn_cut_off_in_the_gateway_exits_non_zero_with_one_line(tmp_path: Path, fake_llm_thread, start_gateway, cut_off, config, line) -> None:
    fake_llm_thread.fail("slow", delay=120)
    fake_llm_thread.reply("a reply that never comes")
    gateway = start_gateway(config)
    returncode, out, err = cut_off(tmp_path, gateway, fake_llm_thread)
    assert returncode not in (0, None), (out, err)
    assert out == ""
    (told,) = said(err)
    assert told.startswith("error:") and line in told, err


def test_a_turn_cut_off_in_process_exits_130_with_one_line(tmp_path: Path, fake_llm_thread) -> None:
    write_config(tmp_path, fake_llm_thread.base_url)
    fake_llm_thread.fail("slow", delay=120)
    fake_llm_thread.reply("a reply that never comes")
    client = agent(tmp_path, "--local", "-m", "a question interrupted here")
    until(lambda: len(fake_llm_thread.requests) == 1, "the turn to ask the model")
    client.send_signal(signal.SIGINT)
    returncode, out, err = finished(client)
    assert returncode == 130 and out == ""
    (told,) = said(err)
    assert "interrupted" in told, err
