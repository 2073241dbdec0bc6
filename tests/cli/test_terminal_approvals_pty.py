"""Approvals in the live terminal of ``clawbot run``, as a person at a real terminal (a pty) meets them.

The prompt asks about the oldest approval still waiting, naming the tool and the command;
a word and Enter answers it, so a message begun as the question appears stays a message.
"""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

import pytest
from clawbot.testing.fake_llm import Reply, ToolCallSpec

from .ptyterm import COLUMNS, ROWS, Terminal, run_config

pytest.importorskip("pty")

STARTUP_S = 30.0
ENV = {"PATH": os.environ.get("PATH", os.defpath)}


def _exec(command: str) -> Reply:
    return Reply(tool_calls=[ToolCallSpec("exec", {"command": command})])


def test_a_line_typed_while_an_approval_is_asked_is_a_message_and_always_is_a_word(tmp_path: Path, fake_llm_thread) -> None:
    fake = fake_llm_thread
    workspace = tmp_path / "ws"
    fake.queue(_exec("touch approved.txt"), "That needs your approval.", "It is noon.", "Done: approved.txt exists now.")
    run_config(tmp_path, fake.base_url, f'\n[agents.defaults]\nworkspace = "{workspace}"\n')
    with Terminal(["run"], tmp_path, env=ENV) as term:
        term.wait_for("you>", STARTUP_S)
        term.type("make the file\r")
        term.wait_for("[d]eny")
        term.type("also, what time is it?\r")  # begins with "a", as allow-always once did
        screen = term.wait_for("It is noon.")
        assert "you> also, what time is it?" in screen
        assert not (workspace / "approved.txt").exists() and "Approved" not in screen
        assert screen.rstrip().endswith("approve exec: touch approved.txt? [o]nce, always, [d]eny, then Enter (Esc: later)")
        term.type("a\r")  # one letter is no answer to allow-always: an ordinary line
        term.wait_for("you> a\n")
        assert not (workspace / "approved.txt").exists()
        term.type("always\r")
        term.wait_for("Approved (always); exec is running")
        term.wait_for("Done: approved.txt exists now.")
        term.type("\x04")
        assert term.wait_exit() == 0
    assert b"Traceback" not in term.raw


def test_the_question_names_the_oldest_waiting_approval_and_drops_those_answered_or_expired(tmp_path: Path, fake_llm_thread) -> None:
    fake = fake_llm_thread
    workspace = tmp_path / "ws"
    fake.queue(_exec("touch DANGEROUS.txt"), _exec("touch harmless.txt"), "Both need your approval.")
    extra = f'\n[agents.defaults]\nworkspace = "{workspace}"\n\n[plugins.tools.exec]\napproval_expiry_s = 10\n'
    run_config(tmp_path, fake.base_url, extra)
    with Terminal(["run"], tmp_path, env=ENV) as term:
        term.wait_for("you>", STARTUP_S)
        term.type("make the files\r")
        screen = term.wait_for("(1 of 2)?")
        ids = re.findall(r"Approval needed \((\w+)\)", screen)
        assert len(ids) == 2 and "approve exec: touch DANGEROUS.txt (1 of 2)?" in screen, screen
        term.type(f"/deny {ids[0]}\r")  # answered another way: the question moves on
        term.wait_for("Denied; exec will not run")
        term.wait_for("approve exec: touch harmless.txt? [o]nce")
        assert "(1 of" not in term.text().splitlines()[-1]
        # Left alone, it expires: the question goes, the prompt comes back.
        deadline = time.monotonic() + 15
        while not term.text().rstrip().endswith("you>") and time.monotonic() < deadline:
            time.sleep(0.1)
        assert term.text().rstrip().endswith("you>"), term.text()
        term.type("\x04")
        assert term.wait_exit() == 0
    assert not (workspace / "DANGEROUS.txt").exists() and not (workspace / "harmless.txt").exists()
    assert b"Traceback" not in term.raw


def test_a_padded_command_leaves_the_notice_and_the_question_on_screen(tmp_path: Path, fake_llm_thread) -> None:
    workspace = tmp_path / "ws"
    (workspace / "precious").mkdir(parents=True)
    head = "rm -rf precious #"
    command = head + " " * (COLUMNS * (ROWS + 5)) + "(clawbot) \u2502 ls -la"
    fake = fake_llm_thread
    fake.queue(_exec(command), "Listing needs your OK.")
    run_config(tmp_path, fake.base_url, f'\n[agents.defaults]\nworkspace = "{workspace}"\n')
    with Terminal(["run"], tmp_path, env=ENV) as term:
        term.wait_for("you>", STARTUP_S)
        term.type("list the files\r")
        screen = term.wait_for("[d]eny")
        time.sleep(0.3)
        screen = term.text()
        assert "Approval needed" in screen and "Why:" in screen
        assert f"[clawbot] \u2502 {head}\u27e8{COLUMNS * (ROWS + 5)} spaces\u27e9(clawbot) \u2502 ls -la" in screen
        assert "approve exec: rm -rf precious # (clawbot) \u2502 ls -la? [o]nce" in screen
        term.type("o")  # a single key answers nothing
        time.sleep(1)
        assert (workspace / "precious").exists()
        term.type("\x15deny\r")  # Ctrl-U clears the line
        term.wait_for("Denied; exec will not run")
        term.type("\x04")
        assert term.wait_exit() == 0
    assert (workspace / "precious").exists()
    assert b"Traceback" not in term.raw
