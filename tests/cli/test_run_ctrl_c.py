"""Ctrl-C arriving as a signal (``kill -INT``, or typed while the terminal is not in raw
mode) reaches ``clawbot run``'s terminal as "stop the turn", in a real terminal (a pty)."""

from __future__ import annotations

import time
from pathlib import Path

from .ptyterm import Terminal, run_config

STARTUP_S = 30.0
EXIT_S = 30.0  # without the fix it waits for Enter forever


def test_ctrl_c_at_the_prompt_exits_without_waiting_for_enter(tmp_path: Path, fake_llm_thread) -> None:
    run_config(tmp_path, fake_llm_thread.base_url)
    with Terminal(["run"], tmp_path) as term:
        term.wait_for("you>", STARTUP_S)
        time.sleep(0.2)  # let it block in reading the terminal
        term.interrupt()
        assert term.wait_exit(EXIT_S) == 0
    assert b"Traceback" not in term.raw and b"could not acquire lock" not in term.raw, bytes(term.raw)


def test_ctrl_c_as_a_signal_stops_the_running_turn_and_keeps_the_chat(tmp_path: Path, fake_llm_thread) -> None:
    fake_llm_thread.fail("stalled_stream", delay=60, after_events=3)
    fake_llm_thread.queue("Once upon a time, in a reply that never ends")
    run_config(tmp_path, fake_llm_thread.base_url)
    with Terminal(["run"], tmp_path) as term:
        term.wait_for("you>", STARTUP_S)
        term.type("tell me a story\r")
        term.wait_for("Once upon")
        term.interrupt()
        term.wait_for("[clawbot] Stopped.")
        time.sleep(0.2)
        assert term.proc.poll() is None
        term.interrupt()  # nothing runs now: the chat ends
        assert term.wait_exit(EXIT_S) == 0
    assert b"Traceback" not in term.raw
