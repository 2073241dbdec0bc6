"""``clawbot cron add|list|rm|runs|run``: in process for the store commands, and ``run``
through a real ``clawbot run`` (a subprocess against the fake LLM) whose channels deliver."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from clawbot.control.client import find_gateway
from clawbot.testing.cli import invoke_cli, subprocess_env


def write_config(home: Path, base_url: str = "http://127.0.0.1:9") -> None:
    workspace = home / "ws"
    workspace.mkdir(parents=True, exist_ok=True)
    (home / "clawbot.toml").write_text(
        f'[agents.defaults]\nworkspace = "{workspace}"\n\n[agents.defaults.model]\nprimary = "openai/gpt-test"\n\n'
        f'[providers.openai]\nbase_url = "{base_url}/v1"\napi_key = "sk-test"\n\n'
        "[channels.terminal]\nenabled = false\n\n[gateway]\nport = 0\n",
        encoding="utf-8",
    )


def test_add_list_runs_rm(tmp_path: Path) -> None:
    write_config(tmp_path)
    added = invoke_cli("cron", "add", "--name", "standup", "--cron", "0 9 * * 1-5", "--tz", "Europe/Berlin", "--message", "Plan my day", home=tmp_path)
    assert added.returncode == 0, added.stderr
    assert "added cron job standup: cron 0 9 * * 1-5 (Europe/Berlin)" in added.stdout
    assert invoke_cli("cron", "add", "--name", "tea", "--every", "2h", "--message", "Tea?", "--deliver", "telegram:42", home=tmp_path).returncode == 0
    listed = invoke_cli("cron", "list", "--json", home=tmp_path)
    rows = json.loads(listed.stdout)
    assert [(r["name"], r["schedule"]["kind"], r["deliver"]) for r in rows] == [("standup", "cron", ""), ("tea", "every", "telegram:42")]
    assert all(r["next_run"] and r["last_run"] is None for r in rows)
    assert "standup  cron 0 9 * * 1-5 (Europe/Berlin)" in invoke_cli("cron", "list", home=tmp_path).stdout
    runs = invoke_cli("cron", "runs", "tea", home=tmp_path)
    assert runs.returncode == 0 and "tea has not run yet" in runs.stdout
    assert json.loads(invoke_cli("cron", "runs", "tea", "--json", home=tmp_path).stdout) == []
    removed = invoke_cli("cron", "rm", "tea", home=tmp_path)
    assert removed.returncode == 0 and "removed cron job tea" in removed.stdout
    assert [r["name"] for r in json.loads(invoke_cli("cron", "list", "--json", home=tmp_path).stdout)] == ["standup"]


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (["--name", "x", "--message", "m"], "give exactly one of --cron, --at or --every"),
        (["--name", "x", "--every", "1h", "--at", "2026-12-01T09:00", "--message", "m"], "give exactly one of --cron, --at or --every"),
        (["--name", "Bad Name", "--every", "1h", "--message", "m"], "name: 'Bad Name' is not a job name"),
        (["--name", "x", "--cron", "0 9 * *", "--message", "m"], "cron: '0 9 * *' has 4 fields"),
        (["--name", "x", "--cron", "0 9 * * *", "--tz", "Moon/Base", "--message", "m"], "tz: 'Moon/Base' is not a known time zone"),
        (["--name", "x", "--at", "tomorrow", "--message", "m"], "at: 'tomorrow' is not an ISO 8601 time"),
        (["--name", "x", "--every", "often", "--message", "m"], "every: 'often' is not a duration"),
        (["--name", "x", "--every", "1h", "--message", "m", "--deliver", "telegram"], "deliver: 'telegram' is not <channel>:<target>"),
        (["--name", "x", "--every", "1h", "--message", "m", "--agent", "ghost"], "agent: no agent 'ghost' is configured"),
        (["--name", "x", "--every", "1h", "--message", " "], "message: a job needs a message"),
    ],
)
def test_bad_jobs_are_refused_with_what_is_wrong(tmp_path: Path, args: list[str], error: str) -> None:
    write_config(tmp_path)
    result = invoke_cli("cron", "add", *args, home=tmp_path)
    assert result.returncode == 2 and error in result.stderr, result.stderr
    assert "Traceback" not in result.stderr + result.stdout


def test_names_that_do_not_exist_are_named(tmp_path: Path) -> None:
    write_config(tmp_path)
    assert invoke_cli("cron", "add", "--name", "dup", "--every", "1h", "--message", "m", home=tmp_path).returncode == 0
    again = invoke_cli("cron", "add", "--name", "dup", "--every", "1h", "--message", "m", home=tmp_path)
    assert again.returncode == 2 and "a job named 'dup' exists already" in again.stderr
    for command in (["rm", "nope"], ["runs", "nope"], ["run", "nope"]):
        result = invoke_cli("cron", *command, home=tmp_path)
        assert result.returncode == 1 and "no cron job is named 'nope'" in result.stderr, (command, result.stderr)


def test_run_without_a_gateway_runs_here_and_cannot_deliver(tmp_path: Path, fake_llm_thread) -> None:
    write_config(tmp_path, fake_llm_thread.base_url)
    fake_llm_thread.reply("Here is your summary.")
    assert invoke_cli("cron", "add", "--name", "sum", "--every", "1d", "--message", "Summarise", "--deliver", "telegram:1", home=tmp_path).returncode == 0
    result = invoke_cli("cron", "run", "sum", "--json", home=tmp_path)
    run = json.loads(result.stdout)
    assert result.returncode == 1 and (run["status"], run["delivered"], run["reason"]) == ("failed", False, "manual")
    assert "no gateway is running" in run["error"]
    assert [r["status"] for r in json.loads(invoke_cli("cron", "runs", "sum", "--json", home=tmp_path).stdout)] == ["failed"]


def test_run_goes_through_a_running_gateway(tmp_path: Path, fake_llm_thread) -> None:
    write_config(tmp_path, fake_llm_thread.base_url)
    fake_llm_thread.reply("Ran inside the gateway.")
    env = subprocess_env(tmp_path)
    add = [sys.executable, "-m", "clawbot.cli.main", "cron", "add", "--name", "ping", "--every", "1d", "--message", "Ping"]
    assert subprocess.run(add, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60).returncode == 0
    process = subprocess.Popen(
        [sys.executable, "-m", "clawbot.cli.main", "run"],
        cwd=tmp_path,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 30
        while find_gateway(tmp_path) is None:
            assert process.poll() is None and time.monotonic() < deadline, process.stderr.read() if process.poll() is not None else "no gateway"
            time.sleep(0.05)
        run = subprocess.run(
            [sys.executable, "-m", "clawbot.cli.main", "cron", "run", "ping", "--json"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60
        )
        assert run.returncode == 0, run.stderr
        answer = json.loads(run.stdout)
        assert (answer["status"], answer["reason"], answer["session_key"]) == ("ok", "manual", "agent:main:cron:ping")
        assert "Ping" in str(fake_llm_thread.requests[-1].body)
    finally:
        process.send_signal(signal.SIGTERM)
        process.communicate(timeout=30)
    assert process.returncode == 0
