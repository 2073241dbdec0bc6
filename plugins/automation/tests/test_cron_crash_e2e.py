"""A cron run cut off by SIGKILL is never lost and never run twice at once.

Real ``clawbot run`` and ``clawbot cron`` subprocesses against the fake LLM (the real OpenAI
provider over loopback); the fake holds the run's model request open, so the gateway is
killed mid-run. Counting the fake's requests shows how often the model was asked.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from clawbot.control.client import find_gateway
from clawbot.testing.cli import subprocess_env
from clawbot_automation.cron_store import CronStore, converter

WAIT_S = 60.0
pytestmark = pytest.mark.timeout(300)  # several clawbot processes one after another, on a busy machine too


def _config(home: Path, base_url: str, catch_up: str = "once") -> dict[str, str]:
    workspace = home / "ws"
    workspace.mkdir(parents=True, exist_ok=True)
    (home / "clawbot.toml").write_text(
        f'[agents.defaults]\nworkspace = "{workspace}"\n\n[agents.defaults.model]\nprimary = "openai/gpt-test"\n\n'
        f'[providers.openai]\nbase_url = "{base_url}/v1"\napi_key = "sk-test"\n\n'
        f'[channels.terminal]\nenabled = false\n\n[gateway]\nport = 0\n\n[cron]\ncatch_up = "{catch_up}"\n',
        encoding="utf-8",
    )
    return subprocess_env(home)


def _clawbot(home: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "clawbot.cli.main", *args], cwd=home, env=env, capture_output=True, text=True, timeout=120)


def _start(home: Path, env: dict[str, str], *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "clawbot.cli.main", *args],
        cwd=home,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _wait_for(what: str, condition: Callable[[], Any], process: subprocess.Popen[str] | None = None) -> Any:
    deadline = time.monotonic() + WAIT_S
    while not (found := condition()):
        if process is not None and process.poll() is not None:
            raise AssertionError(f"waiting for {what}, the process ended: {process.communicate()}")
        assert time.monotonic() < deadline, f"no {what} within {WAIT_S:.0f}s"
        time.sleep(0.05)
    return found


@contextmanager
def _gateway(home: Path, env: dict[str, str]) -> Iterator[subprocess.Popen[str]]:
    process = _start(home, env, "run")
    try:
        _wait_for("gateway", lambda: find_gateway(home), process)
        yield process
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
        process.communicate(timeout=60)


def _add_due_soon(home: Path, env: dict[str, str], name: str) -> None:
    """Add a job due once, seconds from now (again, if adding took longer than that)."""
    for _ in range(5):
        at = (datetime.now().astimezone() + timedelta(seconds=15)).isoformat(timespec="seconds")
        added = _clawbot(home, env, "cron", "add", "--name", name, "--at", at, "--message", "Write the weekly report")
        if added.returncode == 0 or "has already passed" not in added.stderr:
            break
    assert added.returncode == 0, added.stderr


def _runs(home: Path, name: str) -> list[dict[str, Any]]:
    """The job's history as `clawbot cron runs NAME --json` prints it (read here: polling
    through a new process each time would take seconds a time on a busy machine)."""
    return [converter.unstructure(run) for run in CronStore(home / "cron").runs(name)]


def _shown_runs(home: Path, env: dict[str, str], name: str) -> list[dict[str, Any]]:
    shown = _clawbot(home, env, "cron", "runs", name, "--json")
    assert shown.returncode == 0 and "Traceback" not in shown.stderr, shown.stderr
    return json.loads(shown.stdout)


def _kill(process: subprocess.Popen[str]) -> None:
    process.kill()  # SIGKILL: no cleanup, nothing recorded on the way out
    process.communicate(timeout=30)
    assert process.returncode == -signal.SIGKILL


@pytest.mark.parametrize(("policy", "asked"), [("once", 2), ("none", 1)])
def test_a_run_killed_mid_turn_is_interrupted_and_follows_catch_up(tmp_path: Path, fake_llm_thread, policy: str, asked: int) -> None:
    fake = fake_llm_thread
    env = _config(tmp_path, fake.base_url, policy)
    fake.fail("slow", delay=120)  # the run's model request hangs: the gateway is mid-run
    with _gateway(tmp_path, env) as gateway:
        _add_due_soon(tmp_path, env, "report")  # the running gateway picks it up within seconds
        _wait_for("the run's model request", lambda: len(fake.requests) == 1, gateway)
        [started] = _wait_for("the run recorded as started", lambda: _runs(tmp_path, "report"))
        assert (started["status"], started["reason"]) == ("running", "schedule")
        _kill(gateway)

    fake.reply("The weekly report is written.")
    with _gateway(tmp_path, env) as gateway:
        if policy == "none":
            _wait_for("the run marked interrupted", lambda: [r for r in _runs(tmp_path, "report") if r["status"] == "interrupted"], gateway)
        else:
            _wait_for("the retry", lambda: any(r["status"] == "ok" for r in _runs(tmp_path, "report")), gateway)
    runs = _shown_runs(tmp_path, env, "report")  # the gateway has stopped: nothing more runs
    first = runs[0]
    assert (first["run_id"], first["status"], first["reason"]) == (started["run_id"], "interrupted", "schedule")
    assert "clawbot stopped while it ran" in first["error"] and f"cron.catch_up = {policy}" in first["error"]
    if policy == "none":
        assert len(runs) == 1
    else:
        assert [(r["status"], r["reason"], r["scheduled_at"]) for r in runs[1:]] == [("ok", "retry", started["scheduled_at"])]
    assert len(fake.requests) == asked  # the model was asked once per run, never twice for one
    listed = _clawbot(tmp_path, env, "cron", "runs", "report")
    assert listed.stdout.splitlines()[0].split()[1] == "interrupted", listed.stdout


def test_cron_run_does_not_run_again_here_when_the_gateway_dies_mid_run(tmp_path: Path, fake_llm_thread) -> None:
    fake = fake_llm_thread
    env = _config(tmp_path, fake.base_url)
    assert _clawbot(tmp_path, env, "cron", "add", "--name", "ping", "--every", "1d", "--message", "Ping").returncode == 0
    fake.fail("slow", delay=120)
    with _gateway(tmp_path, env) as gateway:
        command = _start(tmp_path, env, "cron", "run", "ping")
        _wait_for("the run's model request", lambda: len(fake.requests) == 1, gateway)
        _kill(gateway)
        out, err = command.communicate(timeout=60)
    assert command.returncode == 1, (out, err)
    assert "the run of ping it started was cut off and is not run again here" in err and "Traceback" not in err
    assert len(fake.requests) == 1  # not asked a second time by the command

    fake.reply("Pong.")
    again = _clawbot(tmp_path, env, "cron", "run", "ping", "--json")  # no gateway now: runs here, once
    assert again.returncode == 0, again.stderr
    assert len(fake.requests) == 2
    runs = _shown_runs(tmp_path, env, "ping")
    assert [(r["status"], r["reason"]) for r in runs] == [("interrupted", "manual"), ("ok", "manual")]
    assert "not run again: a newer run followed" in runs[0]["error"]


def test_two_processes_never_run_one_job_at_once(tmp_path: Path, fake_llm_thread) -> None:
    fake = fake_llm_thread
    env = _config(tmp_path, fake.base_url)
    assert _clawbot(tmp_path, env, "cron", "add", "--name", "ping", "--every", "1d", "--message", "Ping").returncode == 0
    fake.fail("slow", delay=120)
    first = _start(tmp_path, env, "cron", "run", "ping")  # no gateway: it runs the job itself
    try:
        _wait_for("the first run's model request", lambda: len(fake.requests) == 1, first)
        second = _clawbot(tmp_path, env, "cron", "run", "ping")
        assert second.returncode == 1 and "cron job ping is running already, in clawbot process" in second.stderr, second.stderr
        assert str(first.pid) in second.stderr and "Traceback" not in second.stderr
        assert len(fake.requests) == 1
        assert [r["status"] for r in _shown_runs(tmp_path, env, "ping")] == ["running"]
    finally:
        _kill(first)
    fake.reply("Pong.")
    third = _clawbot(tmp_path, env, "cron", "run", "ping")  # the lock died with its holder
    assert third.returncode == 0, third.stderr
    assert len(fake.requests) == 2
