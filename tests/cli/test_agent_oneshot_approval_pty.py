"""``clawbot agent -m`` in a pseudo-terminal: the approval question names what it allows,
whatever the command looks like, ``show`` prints what the notice left out (and allowing
waits for it), and Ctrl-C at the question says what really happened."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from clawbot.testing.fake_llm import Reply, ToolCallSpec

from .ptyterm import COLUMNS, ROWS, Terminal, run_config

ENV = {"PATH": os.environ.get("PATH", os.defpath)}
HEAD = "rm -rf precious #"


def _ask(tmp_path: Path, fake, command: str) -> Path:  # noqa: ANN001 - the fake LLM
    workspace = tmp_path / "ws"
    (workspace / "precious").mkdir(parents=True)
    fake.queue(Reply(tool_calls=[ToolCallSpec("exec", {"command": command})]), "Listing needs your OK.", "Done.")
    run_config(tmp_path, fake.base_url, f'\n[agents.defaults]\nworkspace = "{workspace}"\n')
    return workspace


def test_the_question_names_a_padded_command(tmp_path: Path, fake_llm_thread) -> None:
    workspace = _ask(tmp_path, fake_llm_thread, HEAD + " " * (COLUMNS * (ROWS + 5)) + "\u2502 ls -la")
    with Terminal(["agent", "-m", "list the files"], tmp_path, env=ENV) as term:
        screen = term.wait_for("(Enter: deny):", 30)
        assert "Approval needed: exec wants to run the command below" in screen
        assert f"\u2502 {HEAD}\u27e8" in screen
        assert re.search(rf"Allow \w{{6}} \(exec: {re.escape(HEAD)} \u2502 ls -la\)\? \[o\]nce, \[d\]eny (Enter: deny):", screen) is None
        assert re.search(r"Allow \w{6} \(exec: rm -rf precious # \u2502 ls -la\)\? \[o\]nce, \[d\]eny \(Enter: deny\):", screen), screen
        term.type("d\r")
        assert term.wait_exit(20) == 0
        assert "Denied; exec will not run" in term.text()
    assert (workspace / "precious").exists()
    assert b"Traceback" not in term.raw


def test_always_is_a_word_and_ctrl_c_at_the_question_leaves_the_approval_unanswered(tmp_path: Path, fake_llm_thread) -> None:
    workspace = _ask(tmp_path, fake_llm_thread, "touch made.txt")
    with Terminal(["agent", "-m", "make it"], tmp_path, env=ENV) as term:
        term.wait_for("(exec: touch made.txt)? [o]nce, always, [d]eny (Enter: deny):", 30)
        term.type("a\r")  # one letter never allows always: asked again
        term.wait_for("(Enter: deny): a\nAllow ")
        term.type("\x03")
        assert term.wait_exit(10) == 130
        screen = term.text()
    assert "left unanswered: exec did not run" in screen and "recorded as aborted" not in screen
    assert not (workspace / "made.txt").exists()
    # The turn had finished: its transcript ends with the reply, not an aborted turn.
    (transcript,) = (tmp_path / "sessions" / "main").glob("*.jsonl")
    text = transcript.read_text()
    assert "Listing needs your OK." in text and '"aborted"' not in text.replace('": "', '":"').replace(" ", "")
    assert b"Traceback" not in term.raw


def test_show_prints_the_whole_command_and_allowing_waits_for_it(tmp_path: Path, fake_llm_thread) -> None:
    command = "ls " + "a" * 150 + " ; touch made.txt ; " + "b" * 150 + " ; ls"
    workspace = _ask(tmp_path, fake_llm_thread, command)
    with Terminal(["agent", "-m", "list the files"], tmp_path, env=ENV) as term:
        screen = term.wait_for("(Enter: deny):", 30)
        assert "touch made.txt" not in screen and "characters are hidden" in screen and "type show to see it all" in screen
        assert "[o]nce, [d]eny, show (Enter: deny):" in screen
        term.type("o\r")
        term.wait_for("Not allowed yet:")
        term.wait_for_question("(Enter: deny):")
        term.type("show\r")
        screen = term.wait_for("That is all of approval")
        # cut into rows of the terminal's width, each continued row marked, nothing left out
        rows = [line for line in screen.split(" in full: ")[-1].splitlines() if line.startswith(("\u2502 ls aaa", "\u2506 "))]
        assert all(len(row) < COLUMNS for row in screen.split(" in full: ")[-1].splitlines()) and len(rows) > 1, screen
        assert command in "".join(row[2:] for row in rows), rows
        term.wait_for_question("(Enter: deny):")
        term.type("o\r")
        assert term.wait_exit(30) == 0
        assert "Approved (once); exec is running" in term.text()
    assert (workspace / "made.txt").exists()
    assert b"Traceback" not in term.raw


@pytest.mark.parametrize(("answer", "runs"), [("o", True), ("always", True), ("d", False), ("", False)])
def test_approval_is_asked_on_the_terminal(tmp_path: Path, fake_llm_thread, answer: str, runs: bool) -> None:
    command = "touch approved.txt && echo ran >> runs.log"
    workspace = tmp_path / "ws"
    workspace.mkdir()
    fake_llm_thread.queue(Reply(tool_calls=[ToolCallSpec("exec", {"command": command})]), "It needs your approval.", "Done: approved.txt exists now.")
    run_config(tmp_path, fake_llm_thread.base_url, f'\n[agents.defaults]\nworkspace = "{workspace}"\n')
    with Terminal(["agent", "-m", "make approved.txt"], tmp_path, env={**ENV, "NO_COLOR": "1"}) as term:
        screen = term.wait_for("(Enter: deny):", 30)
        assert "It needs your approval." in screen
        assert "exec wants to run the command below" in screen and command in screen
        assert re.search(rf"Allow \w{{6}} \(exec: {re.escape(command)}\)\? \[o\]nce, always, \[d\]eny", screen)
        assert "/approve" not in screen.split("It needs")[1]
        term.type(answer + "\r")
        assert term.wait_exit(30) == 0, term.text()
        shown = bytes(term.raw).decode(errors="replace")
    assert (workspace / "approved.txt").exists() is runs, shown
    if runs:
        scope = "always" if answer == "always" else "once"
        assert f"Approved ({scope}); exec is running:" in shown
        assert shown.rstrip().endswith("Done: approved.txt exists now."), shown
        event = json.dumps(fake_llm_thread.requests[2].messages[-1])
        assert "System event from clawbot" in event and "exit code 0" in event
    else:
        assert "Denied; exec will not run:" in shown
        assert len(fake_llm_thread.requests) == 2
