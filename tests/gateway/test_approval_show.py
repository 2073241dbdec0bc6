"""What an approval notice leaves out can be seen in full, and must be before it is allowed.

A notice fits a screen by cutting a long line's middle and a long command's middle lines:
``ls aaaa… ; rm -rf victim ; bbbb… ; ls`` showed only the ``ls`` around a count. The owner
sees the exact command with ``/approve <id> show``, and allow-once / allow-always wait for
that (deny never does). Real turns through the real gateway and approval broker.
"""

from __future__ import annotations

import re

import pytest
from clawbot import ApprovalDecision

from ..agent.scripted import ScriptedProvider, call
from .chatkit import eventually, guarded_tool, open_chat

OWNER = '[agents.defaults]\nowner_ids = ["fake:alice"]\n'
PADDING = "a" * 150
HIDDEN_IN_THE_MIDDLE = {
    "of a long line": f"ls {PADDING} ; rm -rf victim ; {'b' * 150} ; ls",
    "among many lines": "\n".join(["echo step"] * 8 + ["rm -rf victim"] + ["echo step"] * 8),
}


async def _asked(make_kernel, fake_channel, decisions, command: str, **request):  # noqa: ANN001, ANN202
    provider = ScriptedProvider([call("guarded", "c1")], "Approve it, alice.", "Done.")
    tool = guarded_tool(decisions, command=command, **request)
    chat = await open_chat(make_kernel, fake_channel, provider, tools=[tool], config=OWNER)
    await fake_channel.inject("go", peer_id="alice")
    notice = next(m for m in fake_channel.sent if m.notice)
    approval_id = re.match(r"Approval needed \((\w+)\)", notice.text).group(1)
    return chat, notice, approval_id


async def _answer(fake_channel, text: str, **fields) -> str:  # noqa: ANN001
    await fake_channel.inject(text, **({"peer_id": "alice"} | fields))
    return fake_channel.texts()[-1]


@pytest.mark.parametrize("where", HIDDEN_IN_THE_MIDDLE)
async def test_a_command_partly_hidden_in_its_notice_is_shown_whole_before_it_can_be_allowed(make_kernel, fake_channel, where) -> None:
    decisions: list[ApprovalDecision] = []
    command = HIDDEN_IN_THE_MIDDLE[where]
    chat, notice, approval_id = await _asked(make_kernel, fake_channel, decisions, command, allow_always=True)
    assert "rm -rf victim" not in notice.text
    assert f"characters are hidden (\u27e8\u2026\u27e9): /approve {approval_id} show" in notice.text
    assert notice.approval.choices == ("allow-once", "allow-always", "deny", "show")

    for answer in (f"/approve {approval_id}", f"/approve {approval_id} allow-always"):
        refused = await _answer(fake_channel, answer)
        assert refused.startswith(f"Not allowed yet: the notice of {approval_id} hides") and f"/approve {approval_id} show" in refused
    # Only the owner may look, in the chat that asked; anyone else is refused.
    assert await _answer(fake_channel, f"/approve {approval_id} show", peer_id="bob") == "Only the owner can use /approve in this chat."
    assert decisions == []

    shown = await _answer(fake_channel, f"/approve {approval_id} show")
    assert fake_channel.sent[-1].notice
    lines = shown.split("\n")
    assert lines[0].startswith(f"Approval {approval_id} in full: guarded wants to run this command")
    # the exact command, every line behind the gutter, nothing left out
    assert [line.removeprefix("\u2502 ") for line in lines if line.startswith("\u2502")] == command.split("\n")
    assert "\u27e8" not in shown and lines[-1] == f"That is all of approval {approval_id}."

    await fake_channel.inject(f"/approve {approval_id}", peer_id="alice")
    await eventually(lambda: fake_channel.texts()[-1] == "Done.")
    assert decisions == [ApprovalDecision.ALLOW_ONCE]
    await chat.close()


async def test_a_partly_hidden_command_can_be_denied_unseen(make_kernel, fake_channel) -> None:
    decisions: list[ApprovalDecision] = []
    chat, _notice, approval_id = await _asked(make_kernel, fake_channel, decisions, HIDDEN_IN_THE_MIDDLE["of a long line"])
    assert (await _answer(fake_channel, f"/deny {approval_id}")).startswith("Denied; guarded will not run")
    await chat.close()
    assert decisions == [ApprovalDecision.DENY]


async def test_a_command_shown_whole_in_its_notice_is_allowed_at_once(make_kernel, fake_channel) -> None:
    decisions: list[ApprovalDecision] = []
    chat, notice, approval_id = await _asked(make_kernel, fake_channel, decisions, "touch made.txt")
    assert "hidden" not in notice.text and notice.approval.choices == ("allow-once", "deny")
    await fake_channel.inject(f"/approve {approval_id}", peer_id="alice")
    await eventually(lambda: fake_channel.texts()[-1] == "Done.")
    assert any(text.startswith("Approved (once)") for text in fake_channel.texts())
    await chat.close()
    assert decisions == [ApprovalDecision.ALLOW_ONCE]


async def test_the_full_view_shows_what_draws_nothing_and_every_field_whole(make_kernel, fake_channel) -> None:
    reason = "it is " + "very " * 100 + "irreversible"
    command = "rm\u00a0-rf x\u2800" + " " * 200 + "ls"
    chat, notice, approval_id = await _asked(make_kernel, fake_channel, [], command, reason=reason, details=("Directory: /" + "d/" * 200,))
    assert "characters are hidden" in notice.text
    shown = await _answer(fake_channel, f"/approve {approval_id} show")
    assert f"Why: {reason}" in shown.split("\n") and "Directory: /" + "d/" * 200 in shown.split("\n")
    assert "\u2502 rm\\u00a0-rf x\\u2800" + " " * 200 + "ls" in shown.split("\n")  # a no-break space is no space to a shell
    await chat.close()
