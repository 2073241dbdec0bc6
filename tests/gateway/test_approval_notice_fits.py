"""Whatever an approval request holds, its notice fits a screen and every row of it is marked.

A command is the model's choice: padded with thousands of spaces or tabs, or one very long
line, it used to fill the screen with rows of its own, pushing the notice's header and the
real command out of view while a look-alike gutter row (``(clawbot) \u2502 ls -la``) sat above
the prompt. The other lines quote the command too (the reason names an unknown word of it,
the directory, the environment the model adds), so every field is tried the same way.
Driven through a real turn; the notice as the chat gets it, and as the terminal shows it at
two widths.
"""

from __future__ import annotations

import unicodedata

import pytest
from clawbot import OutboundMessage
from clawbot.agent.notices import HEAD_LINES, TAIL_LINES
from clawbot_terminal.render import CONTINUED, render_message

from ..agent.scripted import ScriptedProvider, call
from .chatkit import eventually, guarded_tool, open_chat

MARK = OutboundMessage.NOTICE_MARK
HEAD = "rm -rf precious #"
HOSTILE = {
    "padded with spaces": HEAD + " " * 5380 + "(clawbot) \u2502 ls -la",
    "padded with tabs": HEAD + "\t" * 700 + "\u2502 ls -la",
    "spaces and tabs": HEAD + " \t" * 2000 + "\u2502 ls -la",
    "spaced out just below the count": HEAD + ("x" + " " * 15) * 600 + "\u2502 ls -la",
    "tabs spaced out just below the count": HEAD + ("x" + "\t" * 2) * 600 + "\u2502 ls -la",
    "thousands of newlines": HEAD + "\n" * 5000 + "\u2502 ls -la",
    "one very long line": HEAD + "x" * 20_000 + " \u2502 ls -la",
    "many long lines": "\n".join(HEAD + "y" * 300 for _ in range(100)),
    "wide characters": HEAD + "\u754c" * 3000 + "\u2502 ls -la",
    "bidi overrides": HEAD + "\u202e al- sl\u202c" * 400,
    "escape sequences": HEAD + "\x1b[2J\x1b[H" * 500 + "\u2502 ls -la",
    "look-alike gutters": HEAD + "\n\u2502 ls -la\n\u2503 ls\n| ls\n\u23b8 ls\n\u2506 ls",
}


def _cells(text: str) -> int:
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 8 if c == "\t" else 1 for c in text)


# The request's other lines, each as hostile as a model can make it (the reason and the
# grants quote the command's words, the directory and the environment come from the model).
LONG_WORD = "b" * 7900
FIELDS = {
    "a reason quoting a long word": {"reason": f"{LONG_WORD!r} was not found as an executable"},
    "a reason with escapes and wide characters": {"reason": "\x1b[2J\u202e" * 300 + "\u754c" * 3000},
    "a reason of many lines": {"reason": "why\n" * 3000},
    "a long directory": {"details": ("Runs: inside the sandbox.", "Directory: /" + "d/" * 4000, "Input: none (/dev/null).")},
    "a long environment": {"details": ("Environment it adds: " + " ".join(f"V{i}={'x' * 50}" for i in range(300)),)},
    "many lines of grants": {"details": tuple(f"Grant {i}: " + "g" * 300 for i in range(200))},
    "what allow-always remembers": {"allow_always": True, "always_covers": "/usr/bin/" + "c" * 9000 + " with any arguments"},
    "a long tool name": {"tool_name": "t" * 5000},
}
FIELDS["everything at once"] = {key: value for fields in FIELDS.values() for key, value in fields.items()}


async def _notice(make_kernel, fake_channel, command: str, **request) -> OutboundMessage:
    provider = ScriptedProvider([call("guarded", "c1")], "Please approve.")
    chat = await open_chat(make_kernel, fake_channel, provider, tools=[guarded_tool([], command=command, **request)])
    await fake_channel.inject("go", from_owner=True)
    await eventually(lambda: any(m.notice for m in fake_channel.sent))
    await chat.close()
    return next(m for m in fake_channel.sent if m.notice)


def _fits_a_screen(notice: OutboundMessage) -> None:
    """At 80 and 120 columns: at most 38 rows (the question and the bar below it need two),
    none the terminal would wrap, each marked as clawbot's."""
    for columns, screen_rows in ((120, 38), (80, 38)):
        rows = render_message(notice, colour=False, columns=columns).rstrip("\n").split("\n")
        assert len(rows) <= screen_rows, f"{len(rows)} rows at {columns} columns"
        assert all(_cells(row) < columns for row in rows), "a row the terminal would wrap"
        assert all(row.startswith(f"{MARK} ") for row in rows)  # every row is clawbot's, marked
        assert rows[0].startswith(f"{MARK} Approval needed (")


@pytest.mark.parametrize("name", HOSTILE)
async def test_a_hostile_command_cannot_push_its_notice_off_a_screen(make_kernel, fake_channel, name) -> None:
    notice = await _notice(make_kernel, fake_channel, HOSTILE[name])
    lines = notice.text.split("\n")
    assert lines[0].startswith("Approval needed") and lines[-1].startswith("Reply /approve")
    assert len(lines) <= HEAD_LINES + TAIL_LINES + 1 + 4
    assert lines[2].startswith("\u2502 rm -rf precious #")  # the start of what runs, right below the header
    assert "\t" * 3 not in notice.text and "  " * 9 not in notice.text and "\u202e" not in notice.text
    _fits_a_screen(notice)
    for columns in (120, 80):
        rows = render_message(notice, colour=False, columns=columns).rstrip("\n").split("\n")
        quoted = [row for row in rows[2:] if not row.startswith((f"{MARK} Reply", f"{MARK} {CONTINUED}"))]
        quoted = quoted[: next((i for i, row in enumerate(quoted) if "characters are hidden" in row), len(quoted))]
        assert all(row.startswith(f"{MARK} \u2502") for row in quoted), quoted
    # The question a channel asks names it on one short line, whitespace collapsed.
    assert notice.approval is not None
    summary = notice.approval.summary
    assert summary.startswith("guarded: rm -rf precious #") and "\n" not in summary and "  " not in summary
    assert len(summary) <= 80


@pytest.mark.parametrize("name", FIELDS)
async def test_no_line_of_the_notice_can_push_it_off_a_screen(make_kernel, fake_channel, name) -> None:
    command = "rm -rf victim ; " + LONG_WORD + " ; ls -la"
    notice = await _notice(make_kernel, fake_channel, command, **FIELDS[name])
    _fits_a_screen(notice)
    lines = notice.text.split("\n")
    assert lines[-1].startswith("Reply /approve") and lines[1].startswith("Why: ")
    assert any(line.startswith("\u2502 rm -rf victim ; bbb") for line in lines)
    # What was left out is said, with the way to see it, and the question offers it.
    hidden = next(line for line in lines if "characters are hidden" in line)
    assert f"/approve {notice.approval.id} show" in hidden and "cannot be allowed unseen" in hidden
    assert "show" in notice.approval.choices


def test_a_terminal_cuts_a_long_notice_line_into_marked_rows() -> None:
    notice = OutboundMessage("terminal", "local", "Approval needed (ab12cd): " + "word " * 60, notice=True)
    rows = render_message(notice, colour=False, columns=60).rstrip("\n").split("\n")
    assert len(rows) > 1 and all(row.startswith(f"{MARK} ") and len(row) < 60 for row in rows)
    assert all(row.startswith(f"{MARK} {CONTINUED}") for row in rows[1:])
    # Piped output has no width: one line as it was.
    assert render_message(notice, colour=False, columns=None).count("\n") == 1
