"""Approvals in the live terminal of ``clawbot run``, as a person at a real terminal (a pty) meets them.

The prompt asks about the oldest approval still waiting, naming its id, the tool and the
command; a word and Enter answers it, so a message begun as the question appears stays a
message, and so does a word begun before the question appeared. ``show`` prints what the
notice left out, and allowing waits for it.
"""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

from clawbot.testing.fake_llm import Reply, ToolCallSpec

from .ptyterm import COLUMNS, ROWS, Terminal, run_config

STARTUP_S = 30.0
ENV = {"PATH": os.environ.get("PATH", os.defpath)}


def _exec(command: str) -> Reply:
    return Reply(tool_calls=[ToolCallSpec("exec", {"command": command})])


def _question(screen: str) -> str:
    """The prompt's line (the bar below it may hold a hint)."""
    return next(line for line in reversed(screen.splitlines()) if line.startswith(("approve ", "you>")))


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
        approval_id = re.search(r"Approval needed \((\w+)\)", screen).group(1)
        asked = f"approve {approval_id} (exec: touch approved.txt)? [o]nce, always, [d]eny, then Enter (Esc: later)"
        deadline = time.monotonic() + 30  # the prompt asks again once the reply is drawn, a moment later on a busy machine
        while _question(term.text()) != asked and time.monotonic() < deadline:
            time.sleep(0.02)
        assert _question(term.text()) == asked
        # the bar below the prompt is drawn after the prompt itself: wait for it, not for the line above
        term.wait_for("a lone o, always, d or show answers the question; write more to say it to the agent")
        term.type("a\r")  # one letter is no answer to allow-always: an ordinary line
        term.wait_for("you> a\n")
        assert not (workspace / "approved.txt").exists()
        term.type("always\r")
        term.wait_for("Approved (always); exec is running")
        term.wait_for("Done: approved.txt exists now.")
        term.wait_for_prompt()
        term.type("\x04")
        assert term.wait_exit() == 0
    assert b"Traceback" not in term.raw


def test_the_question_names_the_oldest_waiting_approval_and_drops_one_answered_another_way(tmp_path: Path, fake_llm_thread) -> None:
    """(One that expires drops out too: test_terminal_approval_expiry.py, where it can expire in a second.)"""
    fake = fake_llm_thread
    workspace = tmp_path / "ws"
    fake.queue(_exec("touch DANGEROUS.txt"), _exec("touch harmless.txt"), "Both need your approval.")
    run_config(tmp_path, fake.base_url, f'\n[agents.defaults]\nworkspace = "{workspace}"\n')
    with Terminal(["run"], tmp_path, env=ENV) as term:
        term.wait_for("you>", STARTUP_S)
        term.type("make the files\r")
        screen = term.wait_for("(1 of 2)?")
        ids = re.findall(r"Approval needed \((\w+)\)", screen)
        assert len(ids) == 2 and f"approve {ids[0]} (exec: touch DANGEROUS.txt) (1 of 2)?" in screen, screen
        term.type(f"/deny {ids[0]}\r")  # answered another way: the question moves on
        term.wait_for("Denied; exec will not run")
        term.wait_for(f"approve {ids[1]} (exec: touch harmless.txt)? [o]nce")
        assert "(1 of" not in _question(term.text())
        term.type(f"/deny {ids[1]}\r")  # the last one: the prompt comes back
        term.wait_for_prompt()
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
        assert "(exec: rm -rf precious # (clawbot) \u2502 ls -la)? [o]nce" in screen
        term.type("o")  # a single key answers nothing
        time.sleep(1)
        assert (workspace / "precious").exists()
        term.type("\x15deny\r")  # Ctrl-U clears the line
        term.wait_for("Denied; exec will not run")
        term.wait_for_prompt()
        term.type("\x04")
        assert term.wait_exit() == 0
    assert (workspace / "precious").exists()
    assert b"Traceback" not in term.raw


def test_a_command_partly_hidden_in_its_notice_is_shown_whole_at_the_question_before_it_can_be_allowed(tmp_path: Path, fake_llm_thread) -> None:
    """``ls aaaa… ; touch made.txt ; bbbb… ; ls``: the notice shows the line's start and end
    around a count; ``show`` prints it whole, and until then ``o`` allows nothing."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    command = "ls " + "a" * 150 + " ; touch made.txt ; " + "b" * 150 + " ; ls"
    fake = fake_llm_thread
    fake.queue(_exec(command), "I need to list a file, please approve.", "Listed.")
    run_config(tmp_path, fake.base_url, f'\n[agents.defaults]\nworkspace = "{workspace}"\n')
    with Terminal(["run"], tmp_path, env=ENV) as term:
        term.wait_for("you>", STARTUP_S)
        term.type("list\r")
        screen = term.wait_for("show, then Enter")
        approval_id = re.search(r"Approval needed \((\w+)\)", screen).group(1)
        assert "touch made.txt" not in screen
        assert f"characters are hidden (\u27e8\u2026\u27e9): /approve {approval_id} show" in screen
        term.type("o\r")
        term.wait_for("Its notice hides part of what would run: type show to see all of it first")
        time.sleep(0.5)
        assert not (workspace / "made.txt").exists() and "Approved" not in term.text()
        term.type("show\r")
        screen = term.wait_for(f"That is all of approval {approval_id}.")
        assert f"Approval {approval_id} in full: exec wants to run this command (1 line, {len(command)} characters)" in screen
        # every row of it marked, cut by the terminal, nothing left out
        rows = [line for line in screen.splitlines() if line.startswith(("[clawbot] \u2502 ls aaa", "[clawbot] \u2506 "))]
        whole = "".join(row.removeprefix("[clawbot] \u2502 ").removeprefix("[clawbot] \u2506 ") for row in rows)
        assert command in whole, rows
        assert _question(screen).startswith(f"approve {approval_id} (exec: ")  # still asked
        term.type("o\r")
        term.wait_for("Approved (once); exec is running")
        term.wait_for("Listed.")
        term.wait_for_prompt()
        term.type("\x04")
        assert term.wait_exit() == 0
    assert (workspace / "made.txt").exists()
    assert b"Traceback" not in term.raw


def test_two_approvals_alike_at_the_start_are_told_apart_by_the_question(tmp_path: Path, fake_llm_thread) -> None:
    workspace = tmp_path / "ws"
    (workspace / "victim").mkdir(parents=True)
    prefix = "cd . && echo this is just a routine listing step && "
    fake = fake_llm_thread
    fake.queue(_exec(prefix + "rm -rf victim"), _exec(prefix + "touch harmless.txt"), "Both need your approval.")
    run_config(tmp_path, fake.base_url, f'\n[agents.defaults]\nworkspace = "{workspace}"\n')
    with Terminal(["run"], tmp_path, env=ENV) as term:
        term.wait_for("you>", STARTUP_S)
        term.type("go\r")
        screen = term.wait_for("(1 of 2)?")
        ids = re.findall(r"Approval needed \((\w+)\)", screen)
        question = _question(screen)
        # the id, and the end where the two differ
        assert question.startswith(f"approve {ids[0]} (exec: cd . && echo") and "rm -rf victim) (1 of 2)?" in question, question
        term.type("deny\r")
        screen = term.wait_for(f"approve {ids[1]} (exec: cd . && echo")
        assert "touch harmless.txt)?" in _question(screen)
        term.type("deny\r")
        term.wait_for_prompt()
        term.type("\x04")
        assert term.wait_exit() == 0
    assert (workspace / "victim").exists()


def test_a_word_typed_before_the_question_appeared_is_sent_to_the_agent(tmp_path: Path, fake_llm_thread) -> None:
    """The model asked "option o or option d?"; the owner begins "o" at ``you>`` while a turn
    runs, and an approval question replaces the prompt before Enter: the line is no answer
    to it (the owner never saw it), and it reaches the model as a message."""
    workspace = tmp_path / "ws"
    fake = fake_llm_thread
    fake.queue("Which do you want: option o or option d?")
    run_config(tmp_path, fake.base_url, f'\n[agents.defaults]\nworkspace = "{workspace}"\n')
    with Terminal(["run"], tmp_path, env=ENV) as term:
        term.wait_for("you>", STARTUP_S)
        term.type("help me choose\r")
        term.wait_for("option o or option d?")
        fake.fail("slow", delay=3.0)
        fake.queue(_exec("touch f.txt"), "Needs approval.", "You chose o, fine.")
        term.type("also prepare the file\r")
        time.sleep(0.5)
        term.type("o")  # the reply to "option o or option d?", begun at you>
        term.wait_for("[d]eny", 15)
        time.sleep(0.3)
        term.type("\r")
        screen = term.wait_for("You chose o, fine.", 15)
        assert "you> o\n" in screen + "\n" and "nothing was answered" not in screen and "Approved" not in screen
        assert fake.requests[-1].messages[-1]["role"] == "user"  # "You chose o" answered that message
        term.type("deny\r")
        term.wait_for("Denied; exec will not run")
        term.wait_for_prompt()
        term.type("\x04")
        assert term.wait_exit() == 0
    assert not (workspace / "f.txt").exists()


def test_a_long_unknown_word_in_the_command_leaves_the_notice_header_and_its_start_on_screen(tmp_path: Path, fake_llm_thread) -> None:
    """The reason quotes the word it does not know: 7,900 characters of it filled the screen."""
    workspace = tmp_path / "ws"
    (workspace / "victim").mkdir(parents=True)
    fake = fake_llm_thread
    fake.queue(_exec("rm -rf victim ; " + "b" * 7900 + " ; ls -la"), "Please approve the listing.")
    run_config(tmp_path, fake.base_url, f'\n[agents.defaults]\nworkspace = "{workspace}"\n')
    with Terminal(["run"], tmp_path, env=ENV) as term:
        term.wait_for("you>", STARTUP_S)
        term.type("list\r")
        term.wait_for("then Enter")
        time.sleep(0.5)
        screen = term.text()
        assert "Approval needed" in screen and "Why: " in screen
        assert "[clawbot] \u2502 rm -rf victim ; bbb" in screen
        term.type("deny\r")
        term.wait_for("Denied")
        term.wait_for_prompt()
        term.type("\x04")
        assert term.wait_exit() == 0
    assert (workspace / "victim").exists()
