"""Ctrl-C at the ``clawbot run`` prompt ends the process at once, in a real terminal (a pty)."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pty = pytest.importorskip("pty")

STARTUP_S = 60.0
EXIT_S = 3.0


def _read_until(fd: int, wanted: bytes, timeout: float, seen: bytearray) -> bool:
    deadline = time.monotonic() + timeout
    while wanted not in seen:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return False
        ready, _, _ = select.select([fd], [], [], remaining)
        if ready:
            try:
                chunk = os.read(fd, 4096)
            except OSError:  # the child closed the terminal
                return wanted in seen
            if not chunk:
                return wanted in seen
            seen.extend(chunk)
    return True


def _drain(fd: int, seen: bytearray) -> None:
    while select.select([fd], [], [], 0)[0]:
        try:
            chunk = os.read(fd, 4096)
        except OSError:
            return
        if not chunk:
            return
        seen.extend(chunk)


def test_ctrl_c_at_the_prompt_exits_without_waiting_for_enter(tmp_path: Path, fake_llm_thread) -> None:
    (tmp_path / "clawbot.toml").write_text(
        '[agents.defaults.model]\nprimary = "openai/gpt-test"\n\n'
        f'[providers.openai]\nbase_url = "{fake_llm_thread.base_url}/v1"\napi_key = "sk-test"\n'
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("CLAWBOT_")}
    for secret in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY"):
        env.pop(secret, None)
    env.update({"CLAWBOT_HOME": str(tmp_path), "HOME": str(tmp_path), "NO_COLOR": "1", "COLUMNS": "200"})
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "clawbot.cli.main", "run"],
        cwd=tmp_path,
        env=env,
        stdin=slave,
        stdout=slave,
        stderr=subprocess.PIPE,
        close_fds=True,
    )
    os.close(slave)
    seen = bytearray()
    try:
        assert _read_until(master, b"you> ", STARTUP_S, seen), f"no prompt; terminal: {bytes(seen)!r}"
        time.sleep(0.2)  # let it block in reading the terminal
        sent = time.monotonic()
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=EXIT_S)
        except subprocess.TimeoutExpired:
            pytest.fail(f"clawbot run still running {EXIT_S} s after Ctrl-C (waiting for Enter?)")
        elapsed = time.monotonic() - sent
        _drain(master, seen)
        stderr = proc.stderr.read().decode(errors="replace")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stderr.close()
        os.close(master)
    terminal = bytes(seen).decode(errors="replace")
    assert "Traceback" not in stderr and "Traceback" not in terminal, stderr + terminal
    assert "could not acquire lock" not in stderr, stderr
    assert proc.returncode in (0, 130), (proc.returncode, stderr)
    assert elapsed < EXIT_S
