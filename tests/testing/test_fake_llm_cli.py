"""``clawbot dev fake-llm``: the script format in ``--help`` works as written, and
``--record FILE`` writes every request as a JSON line without the credentials.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import httpx2 as httpx
from clawbot.cli.main import cli
from clawbot.testing.fake_llm import load_script
from click.testing import CliRunner

SECRETS = ("sk-ant-very-secret-1234", "sk-openai-very-secret-5678")


def help_example() -> str:
    """The example script printed by ``--help``, as a user would copy it."""
    text = CliRunner().invoke(cli, ["dev", "fake-llm", "--help"], terminal_width=200).output
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip().startswith("Script (TOML"))
    block = []
    for line in lines[start + 1 :]:
        if not line.strip():
            break
        block.append(line)
    return textwrap.dedent("\n".join(block)) + "\n"


def test_help_documents_a_script_that_loads(tmp_path: Path) -> None:
    text = CliRunner().invoke(cli, ["dev", "fake-llm", "--help"]).output
    for word in ("[[replies]]", "[[faults]]", "tool_calls", "stop_reason", "rate_limit", "default_text", "--record"):
        assert word in text, word
    script_file = tmp_path / "script.toml"
    script_file.write_text(help_example(), encoding="utf-8")
    script = load_script(script_file)
    assert [r.tool_calls[0].name if r.tool_calls else r.text for r in script.replies] == ["exec", "Here are your files."]
    assert [(f.kind, f.times, f.retry_after) for f in script.faults] == [("rate_limit", 1, 2)]


def test_record_writes_each_request_without_credentials(tmp_path: Path) -> None:
    script_file = tmp_path / "script.toml"
    script_file.write_text(help_example().split("[[faults]]")[0], encoding="utf-8")
    record = tmp_path / "requests.jsonl"
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "NO_COLOR": "1", "CLAWBOT_HOME": str(tmp_path), "HOME": str(tmp_path)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "clawbot.cli.main", "dev", "fake-llm", "--port", "0", "--script", str(script_file), "--record", str(record)],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = proc.stdout.readline()
        assert line.startswith("fake LLM listening on http://127.0.0.1:"), line + proc.stderr.read() if proc.poll() is not None else line
        url = line.split(" on ", 1)[1].strip()
        with httpx.Client(base_url=url, timeout=10) as client:
            first = client.post(
                "/v1/messages",
                headers={"x-api-key": SECRETS[0], "anthropic-version": "2023-06-01"},
                json={"model": "claude-test", "max_tokens": 64, "messages": [{"role": "user", "content": "list my files"}]},
            )
            second = client.post(
                "/v1/chat/completions",
                headers={"Authorization": f"Bearer {SECRETS[1]}"},
                json={"model": "gpt-test", "messages": [{"role": "user", "content": "and now?"}]},
            )
        assert first.status_code == 200 and first.json()["content"][0]["name"] == "exec"
        assert second.json()["choices"][0]["message"]["content"] == "Here are your files."
        deadline = time.monotonic() + 30
        while len(record.read_text("utf-8").splitlines()) < 2 and time.monotonic() < deadline:
            time.sleep(0.02)  # written as each request arrives, before the server stops
    finally:
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=20)
    assert proc.returncode == 0, err
    assert "stopped after 2 request(s)" in out and "Traceback" not in err

    text = record.read_text("utf-8")
    assert not any(secret in text for secret in SECRETS)
    first, second = (json.loads(line) for line in text.splitlines())
    assert (first["api"], first["method"], first["path"], first["model"]) == ("anthropic", "POST", "/v1/messages", "claude-test")
    assert first["body"]["messages"] == [{"role": "user", "content": "list my files"}]
    assert first["headers"]["x-api-key"] == "[redacted]" and first["headers"]["anthropic-version"] == "2023-06-01"
    assert (second["api"], second["model"], second["stream"]) == ("openai-chat", "gpt-test", False)
    assert second["headers"]["authorization"] == "[redacted]"


def test_a_port_in_use_is_a_one_line_error() -> None:
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = CliRunner().invoke(cli, ["dev", "fake-llm", "--port", str(port)])
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output and result.exception is None or isinstance(result.exception, SystemExit)
    (line,) = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert f"cannot listen on 127.0.0.1:{port}" in line and "--port 0" in line
