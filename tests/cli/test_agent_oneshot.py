"""``clawbot agent -m``: the message from stdin, approvals on the terminal, Ctrl-C.

Real CLI runs against the fake LLM server: in process (click's CliRunner) where stdin is a
pipe, in a pseudo-terminal where the approval question needs a terminal, and as a real
subprocess for SIGINT.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from clawbot.cli.main import cli
from clawbot.testing.distributions import install_distribution
from clawbot.testing.fake_llm import Reply, ToolCallSpec
from click.testing import CliRunner

COMMAND = "touch approved.txt && echo ran >> runs.log"


def setup(tmp_path: Path, base_url: str) -> tuple[Path, Path, dict[str, str]]:
    """A config on the fake LLM, a workspace and the environment of a user's shell."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    config = tmp_path / "clawbot.toml"
    config.write_text(
        f'[agents.defaults]\nworkspace = "{workspace}"\n\n[agents.defaults.model]\nprimary = "openai/gpt-test"\n\n'
        f'[providers.openai]\nbase_url = "{base_url}/v1"\napi_key = "sk-test"\n',
        encoding="utf-8",
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("CLAWBOT_")}
    for secret in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY"):
        env.pop(secret, None)
    env.update({"CLAWBOT_HOME": str(tmp_path), "HOME": str(tmp_path), "NO_COLOR": "1", "COLUMNS": "200"})
    return config, workspace, env


def transcript_entries(home: Path) -> list[dict]:
    (path,) = (home / "sessions" / "main").glob("*.jsonl")
    return [json.loads(line) for line in path.read_text("utf-8").splitlines()]


def invoke(args: list[str], env: dict[str, str], monkeypatch: pytest.MonkeyPatch, stdin: str = ""):  # noqa: ANN201
    for key in [k for k in os.environ if k.startswith("CLAWBOT_") or k.endswith("_API_KEY")]:
        monkeypatch.delenv(key)
    for key in ("CLAWBOT_HOME", "HOME"):
        monkeypatch.setenv(key, env[key])
    return CliRunner().invoke(cli, args, input=stdin)


def test_message_is_read_from_stdin(tmp_path: Path, fake_llm_thread, monkeypatch: pytest.MonkeyPatch) -> None:
    config, _, env = setup(tmp_path, fake_llm_thread.base_url)
    fake_llm_thread.reply("got it")
    result = invoke(["--config", str(config), "agent", "-m", "-"], env, monkeypatch, stdin="first line\nsecond line\n")
    assert result.exit_code == 0, result.output
    assert result.stdout.strip() == "got it"
    assert "first line\nsecond line" in json.dumps(fake_llm_thread.requests[0].messages[-1]).replace("\\n", "\n")

    empty = invoke(["--config", str(config), "agent", "-m", "-"], env, monkeypatch, stdin="\n")
    assert empty.exit_code == 2
    assert "stdin was empty" in empty.output and len(fake_llm_thread.requests) == 1


def test_approval_without_a_terminal_is_denied_with_a_note(tmp_path: Path, fake_llm_thread, monkeypatch: pytest.MonkeyPatch) -> None:
    config, workspace, env = setup(tmp_path, fake_llm_thread.base_url)
    fake_llm_thread.reply(tool_calls=[ToolCallSpec("exec", {"command": COMMAND})])
    fake_llm_thread.reply("It needs your approval.")
    result = invoke(["--config", str(config), "agent", "-m", "-"], env, monkeypatch, stdin="make approved.txt")
    assert result.exit_code == 0, result.output
    assert result.stdout.strip() == "It needs your approval."
    assert f"Denied: exec needs approval to run {COMMAND!r}, and stdin is not a terminal" in result.stderr
    assert not (workspace / "approved.txt").exists()
    assert len(fake_llm_thread.requests) == 2  # no follow-up turn: nothing ran


def _agent_in_background(config: Path, env: dict[str, str], cwd: Path, text: str, until: Callable[[], bool]) -> subprocess.Popen[str]:
    """``clawbot agent -m text`` as a process of its own, once ``until()`` holds (or it ended)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "clawbot.cli.main", "--config", str(config), "agent", "-m", text],
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while not until() and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
    return proc


def test_ctrl_c_during_a_turn_exits_130_and_records_the_turn_as_aborted(tmp_path: Path, fake_llm_thread) -> None:
    config, _, env = setup(tmp_path, fake_llm_thread.base_url)
    fake_llm_thread.fail("slow", delay=30)
    fake_llm_thread.reply("too late")
    proc = _agent_in_background(config, env, tmp_path, "take your time", until=lambda: bool(fake_llm_thread.requests))
    assert fake_llm_thread.requests, "the turn never reached the model"
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=20)
    assert proc.returncode == 130, (out, err)
    assert "Traceback" not in err and "interrupted" in err
    assert out == ""
    entries = transcript_entries(tmp_path)
    assert entries[-1]["type"] == "custom" and entries[-1]["kind"] == "aborted", entries[-1]


BLOCKING_TOOL = """\
import os, time
from clawbot import hookimpl


def _block(call):
    open(os.environ["BLOCK_STARTED"], "w").close()
    time.sleep(120)  # a plugin whose handler hangs in its worker thread
    return "never"


@hookimpl
def clawbot_tools(ctx):
    from clawbot import Tool

    return [Tool("block", "Blocks.", {"type": "object", "properties": {}}, _block)]
"""


def test_ctrl_c_ends_a_one_shot_run_even_when_a_tool_hangs(tmp_path: Path, fake_llm_thread) -> None:
    config, _, env = setup(tmp_path, fake_llm_thread.base_url)
    install_distribution(tmp_path / "site", "blocking-tool", entry_points={"blocking-tool": "blocking_tool"}, modules={"blocking_tool.py": BLOCKING_TOOL})
    started = tmp_path / "started"
    env.update({"PYTHONPATH": str(tmp_path / "site"), "BLOCK_STARTED": str(started)})
    fake_llm_thread.reply(tool_calls=[ToolCallSpec("block", {})])
    proc = _agent_in_background(config, env, tmp_path, "block", until=started.exists)
    assert started.exists(), proc.communicate(timeout=5)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)  # the grace period, not the tool's 120 s
    assert proc.returncode == 130, (out, err)
    assert "Traceback" not in err and "interrupted" in err


def test_a_one_shot_run_waits_for_the_reports_its_turn_was_promised(tmp_path: Path, fake_llm_thread, monkeypatch: pytest.MonkeyPatch) -> None:
    # The promise is AgentHost.expect_system_event; the bundled sub-agents plugin (a default
    # one, found through its entry point) makes it for each sub-agent its turn starts.
    config, _, env = setup(tmp_path, fake_llm_thread.base_url)

    def brain(request):  # noqa: ANN001, ANN202 - answers by who asks
        last = json.dumps(request.body["messages"][-1])
        if "## Sub-agent" in json.dumps(request.body["messages"][0]):
            return Reply(text="the answer is 42")
        if "done after" in last:
            return Reply(text="Your sub-agent found 42.")
        if request.body["messages"][-1]["role"] == "tool":
            return Reply(text="Started it.")
        return Reply(tool_calls=(ToolCallSpec("sessions_spawn", {"task": "compute the answer"}),))

    fake_llm_thread.queue(*[brain] * 4)
    result = invoke(["--config", str(config), "agent", "-m", "find the answer in the background"], env, monkeypatch)
    assert result.exit_code == 0, result.output
    assert result.stdout.split() == [*"Started it.".split(), *"Your sub-agent found 42.".split()]
    assert len(fake_llm_thread.requests) == 4
