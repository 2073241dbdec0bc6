"""The live terminal of ``clawbot run``, as a person at a real terminal (a pty) meets it.

Each test types into the real CLI, talking to the fake LLM server, and reads the screen a
terminal emulator keeps. Streams are slowed with the fake's ``stalled_stream`` fault: part of
the reply is sent, then nothing for a while.
"""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

import pytest
from clawbot.testing.fake_llm import Reply, ToolCallSpec
from clawbot_terminal.channel import DOUBLE_CTRL_C_S

from .ptyterm import Terminal, run_config

STARTUP_S = 30.0
STORY = "Once upon a time there was a terminal that showed every word as it came, and then it stopped."


def _transcript(home: Path) -> str:
    (found,) = [p for p in home.rglob("*.jsonl") if "sessions" in p.parts]
    return found.read_text()


def _stalled_story(home: Path, fake) -> Terminal:  # noqa: ANN001 - the fake LLM
    """``clawbot run`` in a terminal, started on a story whose stream stalls after its first words."""
    fake.fail("stalled_stream", delay=60, after_events=3)
    fake.queue(STORY)
    run_config(home, fake.base_url)
    return Terminal(["run"], home)


def test_replies_stream_tool_calls_show_and_stop_works_mid_turn(tmp_path: Path, fake_llm_thread) -> None:
    fake = fake_llm_thread
    fake.queue(Reply(text="Let me look.", tool_calls=[ToolCallSpec("ls", {"path": "."})]), "Nothing much here.")
    run_config(tmp_path, fake.base_url)
    with Terminal(["run"], tmp_path) as term:
        term.wait_for("you>", STARTUP_S)
        term.type("what is here?\r")
        screen = term.wait_for("Nothing much here.")
        assert re.search(r'^  \u2699 ls path="\."$', screen, re.M), screen  # one dim line per tool call
        assert '\x1b[2m  \u2699 ls path="."'.encode() in term.raw
        assert screen.index("Let me look.") < screen.index("\u2699 ls") < screen.index("Nothing much here.")
        assert screen.count("Nothing much here.") == 1  # streamed, then not printed again

        # The answer stalls half-way: what came so far is on the screen before the turn ends.
        fake.fail("stalled_stream", delay=1.0, after_events=3)
        fake.queue(STORY)
        term.type("tell me a story\r")
        partial = term.wait_for("Once upon")
        assert "it stopped." not in partial
        assert term.wait_for("it stopped.").count("Once upon") == 1
        term.wait_for_prompt()  # the turn is over (its reply ends its line) before the next is typed

        # The same reply stays queued after a stall; this time it stalls for good and /stop ends it.
        fake.fail("stalled_stream", delay=60, after_events=3)
        term.type("again\r")
        assert "Ctrl-C or /stop stops it" in term.wait_for("you> again\nOnce upon a")
        term.type("/stop\r")
        term.wait_for("[clawbot] Stopped.")
        assert '"kind": "aborted"' in _transcript(tmp_path).replace('":"', '": "')
        term.wait_for_prompt()
        term.type("\x04")  # Ctrl-D quits
        assert term.wait_exit() == 0
    assert b"Traceback" not in term.raw
    history = tmp_path / "terminal" / "history"  # what was typed, for the Up key next time; private
    assert "what is here?" in history.read_text() and history.stat().st_mode & 0o777 == 0o600


def test_two_quick_ctrl_c_quit_while_a_turn_runs(tmp_path: Path, fake_llm_thread) -> None:
    with _stalled_story(tmp_path, fake_llm_thread) as term:
        term.wait_for("you>", STARTUP_S)
        term.type("tell me a story\r")
        term.wait_for("Once upon")
        term.type("\x03\x03")  # typed together; as signals (the terminal in cooked mode) they may arrive as one
        deadline = time.monotonic() + 30
        while term.proc.poll() is None and "Ctrl-C again to quit" not in term.text() and time.monotonic() < deadline:
            time.sleep(0.02)
        if term.proc.poll() is None:
            term.type("\x03")  # the note's promise, however long the stop takes
        assert term.wait_exit() == 0
    assert b"Traceback" not in term.raw
    assert '"kind": "aborted"' in _transcript(tmp_path).replace('":"', '": "')


def test_ctrl_c_stops_the_turn_and_a_second_quits(tmp_path: Path, fake_llm_thread) -> None:
    fake = fake_llm_thread
    fake.fail("stalled_stream", delay=60, after_events=3)
    fake.queue(STORY)
    run_config(tmp_path, fake.base_url)
    with Terminal(["run"], tmp_path) as term:
        term.wait_for("you>", STARTUP_S)
        term.type("tell me a story\r")
        term.wait_for("Once upon")
        term.type("\x03")
        term.wait_for("[clawbot] Stopped.")
        assert term.proc.poll() is None  # still there, at the prompt
        term.type("are you there?\r")  # a stalled reply stays queued: this time it comes whole
        term.wait_for("you> are you there?\nOnce upon a time there was a terminal")
        term.wait_gone("working")  # the reply shown whole, its turn still ends (the transcript)
        term.type("\x03")  # nothing runs: Ctrl-C quits
        assert term.wait_exit() == 0
    assert b"Traceback" not in term.raw


def test_an_approval_is_asked_at_the_prompt_and_answered_with_a_word(tmp_path: Path, fake_llm_thread) -> None:
    fake = fake_llm_thread
    workspace = tmp_path / "ws"
    fake.queue(
        Reply(tool_calls=[ToolCallSpec("exec", {"command": "touch approved.txt"})]),
        "That needs your approval.",
        "Done: approved.txt exists now.",
    )
    run_config(tmp_path, fake.base_url, f'\n[agents.defaults]\nworkspace = "{workspace}"\n')
    with Terminal(["run"], tmp_path, env={"PATH": os.environ.get("PATH", os.defpath)}) as term:
        term.wait_for("you>", STARTUP_S)
        term.type("make the file\r")
        screen = term.wait_for("[d]eny")
        approval_id = re.search(r"Approval needed \((\w+)\)", screen).group(1)
        assert f"approve {approval_id} (exec: touch approved.txt)? [o]nce, always, [d]eny, then Enter" in screen
        assert not (workspace / "approved.txt").exists()
        term.type("once\r")
        term.wait_for(f"approve {approval_id} (exec: touch approved.txt): allow-once")
        term.wait_for("Approved (once); exec is running")
        term.wait_for("Done: approved.txt exists now.")
        assert (workspace / "approved.txt").exists()
        term.wait_for_prompt()
        term.type("\x04")
        assert term.wait_exit() == 0
    assert b"Traceback" not in term.raw


@pytest.mark.parametrize("line", ["/etc/hosts looks broken, tell me a story", "/new tell me a story"])
def test_a_turn_begun_by_a_line_starting_with_a_slash_is_stopped_by_ctrl_c(tmp_path: Path, fake_llm_thread, line: str) -> None:
    with _stalled_story(tmp_path, fake_llm_thread) as term:
        term.wait_for("you>", STARTUP_S)
        term.type(line + "\r")
        assert "Ctrl-C or /stop stops it" in term.wait_for("Ctrl-C or /stop stops it")
        term.wait_for("Once upon")
        term.type("\x03")
        term.wait_for("[clawbot] Stopped.")
        assert term.proc.poll() is None  # the turn stopped, the chat goes on
        time.sleep(DOUBLE_CTRL_C_S)
        term.type("\x03")  # nothing runs now: Ctrl-C quits
        assert term.wait_exit() == 0
    assert b"Traceback" not in term.raw


def test_the_turn_a_finished_command_starts_is_stopped_by_ctrl_c(tmp_path: Path, fake_llm_thread) -> None:
    fake = fake_llm_thread
    workspace = tmp_path / "ws"
    fake.queue(Reply(tool_calls=[ToolCallSpec("exec", {"command": "touch approved.txt"})]), "That needs your approval.", STORY)
    run_config(tmp_path, fake.base_url, f'\n[agents.defaults]\nworkspace = "{workspace}"\n')
    with Terminal(["run"], tmp_path, env={"PATH": os.environ.get("PATH", os.defpath)}) as term:
        term.wait_for("you>", STARTUP_S)
        term.type("make the file\r")
        term.wait_for("That needs your approval.")
        fake.fail("stalled_stream", delay=60, after_events=3)  # the report of the command's end stalls
        approval_id = re.search(r"Approval needed \((\w+)\)", term.wait_for("[d]eny")).group(1)
        term.type(f"/approve {approval_id} once\r")
        term.wait_for("Once upon")
        assert "Ctrl-C or /stop stops it" in term.text()
        term.type("\x03")
        term.wait_for("[clawbot] Stopped.")
        assert term.proc.poll() is None
        term.wait_for_prompt()
        term.type("\x04")
        assert term.wait_exit() == 0
    assert (workspace / "approved.txt").exists()
    assert b"Traceback" not in term.raw


def test_quitting_mid_reply_leaves_what_was_shown_on_the_screen(tmp_path: Path, fake_llm_thread) -> None:
    with _stalled_story(tmp_path, fake_llm_thread) as term:
        term.wait_for("you>", STARTUP_S)
        term.type("tell me a story\r")
        term.wait_for("Once upon")
        term.type("\x04")  # Ctrl-D quits at once, the reply unfinished
        assert term.wait_exit() == 0
        assert "you> tell me a story\nOnce upon" in term.text()
    assert b"Traceback" not in term.raw
