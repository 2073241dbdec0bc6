"""``clawbot agent -m`` and ``clawbot status`` with a real ``clawbot run`` serving its control API.

The gateway runs as a subprocess against the fake LLM with only the API as its channel; the
client commands run as subprocesses too, under ``-X importtime``, so the test sees every
module they imported: through a gateway no provider SDK, no aiohttp, no kernel boot.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from clawbot.control.client import find_gateway
from clawbot.control.endpoint import endpoint_path
from clawbot.testing.cli import subprocess_env
from clawbot.testing.fake_llm import ToolCallSpec

#: what booting clawbot in process would import; a client of a running gateway needs none of it
HEAVY = (
    "openai",
    "anthropic",
    "httpx",
    "httpx2",
    "aiohttp",
    "clawbot.kernel",
    "clawbot.boot",
    "clawbot.agent",
    "clawbot.plugins.manager",
    "clawbot.plugins.discovery",
    "clawbot_openai",
    "clawbot_terminal",
)
COMMAND = "touch approved.txt"


def write_config(home: Path, base_url: str) -> Path:
    workspace = home / "ws"
    workspace.mkdir(exist_ok=True)
    (home / "clawbot.toml").write_text(
        f'[agents.defaults]\nworkspace = "{workspace}"\n\n[agents.defaults.model]\nprimary = "openai/gpt-test"\n\n'
        f'[providers.openai]\nbase_url = "{base_url}/v1"\napi_key = "sk-test"\n\n'
        "[channels.terminal]\nenabled = false\n\n[gateway]\nport = 0\n",
        encoding="utf-8",
    )
    return workspace


def clawbot(home: Path, *args: str, importtime: bool = False) -> subprocess.CompletedProcess[str]:
    flags = ["-X", "importtime"] if importtime else []
    return subprocess.run(
        [sys.executable, *flags, "-m", "clawbot.cli.main", *args], cwd=home, env=subprocess_env(home), capture_output=True, text=True, timeout=60
    )


def imported(stderr: str) -> set[str]:
    return {line.split("|")[-1].strip() for line in stderr.splitlines() if line.startswith("import time:")}


def without_importtime(stderr: str) -> str:
    return "\n".join(line for line in stderr.splitlines() if not line.startswith("import time:"))


@pytest.fixture
def gateway(tmp_path: Path, fake_llm_thread) -> Iterator[subprocess.Popen[str]]:
    write_config(tmp_path, fake_llm_thread.base_url)
    process = subprocess.Popen(
        [sys.executable, "-m", "clawbot.cli.main", "run"],
        cwd=tmp_path,
        env=subprocess_env(tmp_path),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and process.poll() is None:
            client = find_gateway(tmp_path)
            if client is not None and client.call("GET", "/v1/health")[0] == 200:
                break
            time.sleep(0.05)
        else:
            process.kill()
            pytest.fail(f"the gateway did not come up: {process.communicate(timeout=10)}")
        yield process
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGINT)
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=5)
        process.communicate(timeout=5)


def test_agent_sends_its_turn_through_the_running_gateway_without_booting_anything(tmp_path: Path, fake_llm_thread, gateway) -> None:
    fake_llm_thread.reply("through the gateway")
    fake_llm_thread.reply("as json")
    result = clawbot(tmp_path, "agent", "-m", "hello", importtime=True)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout == "through the gateway\n"
    assert without_importtime(result.stderr).startswith("clawbot: agent main on openai/gpt-test; config ")
    modules = imported(result.stderr)
    assert "clawbot.control.client" in modules
    assert not {m for m in modules if m.split(".")[0] in HEAVY or any(m == h or m.startswith(h + ".") for h in HEAVY)}
    assert len(fake_llm_thread.requests) == 1  # answered by the gateway's process

    as_json = clawbot(tmp_path, "agent", "-m", "again", "--json")
    payload = json.loads(as_json.stdout)
    assert set(payload) == {"reply", "notices", "model", "agent", "session", "iterations", "tool_calls", "usage", "cost_usd", "session_totals"}
    assert (payload["reply"], payload["model"], payload["session"]) == ("as json", "openai/gpt-test", "agent:main:main")
    assert payload["session_totals"]["turns"] == 2 and payload["usage"]["input_tokens"] > 0

    command = clawbot(tmp_path, "agent", "-m", "/whoami")
    assert command.returncode == 0 and command.stdout.strip() and len(fake_llm_thread.requests) == 2

    status = clawbot(tmp_path, "status")
    assert status.returncode == 0, status.stdout + status.stderr
    assert f"running, pid {gateway.pid}" in status.stdout and "api" in status.stdout and "running turns: none" in status.stdout
    assert re.search(r"^  api +running +for \d+s$", status.stdout, re.M), status.stdout  # when, not a raw timestamp
    assert "heartbeats (main): every 30 min; 0 runs, 0 tokens" in status.stdout  # heartbeats' tokens, apart
    assert re.search(r"^services:\n  heartbeat +running +for \d+s", status.stdout, re.M), status.stdout  # background work, supervised
    assert re.search(r"^page: http://127\.0\.0\.1:\d+/chat/ \(webchat; log in with the token in .*gateway/token\)$", status.stdout, re.M), status.stdout

    gateway.send_signal(signal.SIGINT)
    gateway.wait(timeout=15)
    assert not endpoint_path(tmp_path).exists()
    stopped = clawbot(tmp_path, "status")
    assert stopped.returncode == 1 and "No gateway is running" in stopped.stdout and "clawbot run" in stopped.stdout


def test_a_failed_turn_through_the_gateway_is_an_error_and_exit_1_as_in_process(tmp_path: Path, fake_llm_thread, gateway) -> None:
    fake_llm_thread.fail("auth", times=20)
    result = clawbot(tmp_path, "agent", "-m", "hello")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "error: " in result.stderr and "rejected the API key" in result.stderr and result.stdout == ""
    assert result.stderr.count("rejected the API key") == 1  # an error, not also a notice
    assert "Traceback" not in result.stdout + result.stderr


def test_an_approval_without_a_terminal_says_how_to_answer_and_the_answer_goes_through(tmp_path: Path, fake_llm_thread, gateway) -> None:
    workspace = tmp_path / "ws"
    fake_llm_thread.reply(tool_calls=[ToolCallSpec("exec", {"command": COMMAND})])
    fake_llm_thread.reply("It needs your approval.")
    fake_llm_thread.reply("The file is there.")
    asked = clawbot(tmp_path, "agent", "-m", "make approved.txt")
    assert asked.returncode == 0, asked.stderr
    assert asked.stdout == "It needs your approval.\n"
    assert "stdin is not a terminal" in asked.stderr and 'clawbot agent --session agent:main:main -m "/approve ' in asked.stderr
    approval_id = asked.stderr.split('-m "/approve ', 1)[1].split()[0]
    assert not (workspace / "approved.txt").exists()
    client = find_gateway(tmp_path)
    status, waiting = client.call("GET", "/v1/approvals")
    assert status == 200 and [(a["id"], a["session"], a["summary"]) for a in waiting] == [(approval_id, "agent:main:main", f"exec: {COMMAND}")]
    status, refused = client.call("POST", f"/v1/approvals/{approval_id}", {"choice": "sure"})
    assert status == 400 and "choice" in refused["error"]
    assert client.call("POST", "/v1/approvals/nosuch", {"choice": "deny"})[0] == 404

    answered = clawbot(tmp_path, "agent", "-m", f"/approve {approval_id} allow-once")
    assert answered.returncode == 0, answered.stderr
    assert "Approved (once)" in answered.stdout
    deadline = time.monotonic() + 60
    while not (workspace / "approved.txt").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert (workspace / "approved.txt").exists()


def test_a_stale_endpoint_file_is_ignored_and_the_turn_runs_in_process(tmp_path: Path, fake_llm_thread) -> None:
    write_config(tmp_path, fake_llm_thread.base_url)
    fake_llm_thread.reply("in process")
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True, check=True)
    endpoint_path(tmp_path).parent.mkdir(parents=True)
    endpoint_path(tmp_path).write_text(json.dumps({"pid": int(dead.stdout), "host": "127.0.0.1", "port": 9, "started_at": 0}))
    (endpoint_path(tmp_path).parent / "token").write_text("x" * 43)
    result = clawbot(tmp_path, "agent", "-m", "hi")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "in process\n" and len(fake_llm_thread.requests) == 1

    # a live pid (this test's) whose address answers nothing: the turn still runs, here
    fake_llm_thread.reply("still in process")
    endpoint_path(tmp_path).write_text(json.dumps({"pid": os.getpid(), "host": "127.0.0.1", "port": free_port(), "started_at": 0}))
    result = clawbot(tmp_path, "agent", "-m", "hi")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "still in process\n" and len(fake_llm_thread.requests) == 2


def free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_on_a_terminal_the_approval_is_asked_here_and_answered_through_the_gateway(tmp_path: Path, fake_llm_thread, gateway) -> None:
    from tests.cli.ptyterm import Terminal  # noqa: PLC0415 - the pseudo-terminal helper of the CLI tests

    workspace = tmp_path / "ws"
    fake_llm_thread.reply(tool_calls=[ToolCallSpec("exec", {"command": COMMAND})])
    fake_llm_thread.reply("It needs your approval.")
    fake_llm_thread.reply("The file is there.")
    with Terminal(["agent", "-m", "make approved.txt"], tmp_path) as term:
        term.wait_for(f"(exec: {COMMAND})? [o]nce, always, [d]eny (Enter: deny):", 30)
        term.type("a\r")  # one letter never allows always: asked again
        term.wait_for("(Enter: deny): a\nAllow ")
        term.type("once\r")
        assert term.wait_exit(30) == 0
        screen = term.text()
    assert "Approved (once)" in screen and "The file is there." in screen
    assert (workspace / "approved.txt").exists()
    assert b"Traceback" not in term.raw
