"""Only the owner approves: in a group, in another person's chat and in system-event turns.

Real turns through the real gateway and approval broker, with the fake channel; the model
is scripted. ``alice`` is the owner (``owner_ids = ["fake:alice"]``), ``mallory`` a member of
the group ``team``, ``bob`` a stranger writing directly.
"""

from __future__ import annotations

import re

import pytest
from clawbot import ApprovalDecision, InboundMessage
from clawbot.agent.owners import is_owner
from clawbot.gateway.routing import Router

from ..agent.scripted import ScriptedProvider, call
from .chatkit import background_tool, eventually, guarded_tool, open_chat

OWNER = '[agents.defaults]\nowner_ids = ["fake:alice"]\n'
GROUP = {"peer_id": "team", "chat_type": "group"}

NOT_THE_OWNER = {
    "a group member": ({**GROUP, "sender_id": "mallory"}, ""),
    "a stranger in the main session": ({"peer_id": "bob"}, "\n[session]\nnon_owners_share_main = true\n"),
    "a stranger in their own session by default": ({"peer_id": "bob"}, ""),
    "a stranger in their own session": ({"peer_id": "bob"}, '\n[session]\ndm_scope = "per-peer"\n'),
}


@pytest.mark.parametrize("who", NOT_THE_OWNER)
async def test_a_turn_started_by_someone_else_is_refused_at_once_and_nothing_waits(make_kernel, fake_channel, who) -> None:
    fields, extra = NOT_THE_OWNER[who]
    decisions: list[ApprovalDecision] = []
    provider = ScriptedProvider([call("guarded", "c1")], "That needs the owner.")
    chat = await open_chat(make_kernel, fake_channel, provider, tools=[guarded_tool(decisions)], config=OWNER + extra)
    message = await fake_channel.inject("launch the rocket", **fields)
    refused = provider.requests[1].messages[-1]
    assert refused.is_error and "only the owner can approve" in refused.text and "Nothing ran" in refused.text
    assert fake_channel.texts() == ["That needs the owner."]  # no approval notice was sent
    key = Router.for_config(chat.kernel.config, "main").route(message).session_key
    assert chat.runtime.approvals.pending_for(key) == [] and decisions == []
    await chat.close()


async def test_only_the_owner_answers_and_anyone_else_is_refused_whatever_the_id(make_kernel, fake_channel) -> None:
    decisions: list[ApprovalDecision] = []
    provider = ScriptedProvider([call("guarded", "c1")], "Approve it, alice.", "Launched.")
    chat = await open_chat(make_kernel, fake_channel, provider, tools=[guarded_tool(decisions)], config=OWNER)
    await fake_channel.inject("launch the rocket", **GROUP, sender_id="alice")
    approval_id = re.search(r"/approve (\w+)", provider.requests[1].messages[-1].text).group(1)
    assert fake_channel.sent[0].text.startswith(f"Approval needed ({approval_id})") and fake_channel.sent[0].notice

    async def answer(text: str, **fields) -> str:
        await fake_channel.inject(text, **fields)
        return fake_channel.texts()[-1]

    refused = "Only the owner can use /{} in this chat."
    assert await answer("/approve 0badid", **GROUP, sender_id="mallory") == refused.format("approve")
    assert await answer(f"/approve {approval_id}", **GROUP, sender_id="mallory") == refused.format("approve")
    assert await answer(f"/deny {approval_id}", **GROUP, sender_id="mallory") == refused.format("deny")
    assert await answer("/approve", **GROUP, sender_id="mallory") == refused.format("approve")  # what waits is the owner's business
    assert approval_id in await answer("/approve", **GROUP, sender_id="alice")
    assert "No pending approval" in await answer(f"/approve {approval_id}", peer_id="alice")  # her DM: another session
    assert decisions == []
    await fake_channel.inject(f"/approve {approval_id}", **GROUP, sender_id="alice")
    await eventually(lambda: fake_channel.texts()[-1] == "Launched.")
    assert fake_channel.texts()[-2] == "Approved (once); guarded is running:\n\u2502 launch --rocket"
    assert decisions == [ApprovalDecision.ALLOW_ONCE]
    await chat.close()


async def test_a_system_event_turn_has_the_owner_flag_of_the_turn_that_caused_it(make_kernel, fake_channel) -> None:
    """An approved command's report runs as the owner; a member's background job's report does not."""
    decisions: list[ApprovalDecision] = []
    provider = ScriptedProvider(
        [call("guarded", "c1")],
        "Approve?",  # the owner's turn
        [call("guarded", "c2")],
        "Asked again.",  # the system event after the approval: may ask
        [call("background", "c3")],
        "Started.",  # a member's turn
        [call("guarded", "c4")],
        "Could not ask.",  # the system event of the member's job: may not ask
    )
    tools = [guarded_tool(decisions), background_tool("job finished")]
    chat = await open_chat(make_kernel, fake_channel, provider, tools=tools)
    await fake_channel.inject("launch", peer_id="alice", from_owner=True)  # a channel that knows its owner
    approval_id = re.search(r"/approve (\w+)", provider.requests[1].messages[-1].text).group(1)
    await fake_channel.inject(f"/approve {approval_id}", peer_id="alice", from_owner=True)
    await eventually(lambda: fake_channel.texts()[-1] == "Asked again.")
    asked_again = provider.requests[3].messages[-1]
    assert not asked_again.is_error and "Approval required" in asked_again.text
    assert len(chat.runtime.approvals.pending_for("agent:main:main")) == 1

    await fake_channel.inject("run the job", **GROUP, sender_id="mallory")
    await eventually(lambda: fake_channel.texts()[-1] == "Could not ask.")
    from_event = provider.requests[-1].messages[-1]
    assert from_event.is_error and "only the owner can approve" in from_event.text
    assert chat.runtime.approvals.pending_for("agent:main:fake:group:team") == []
    await chat.close()


def _message(channel: str = "fake", *, sender: str | None = "alice", peer: str = "alice", group: bool = False, **fields) -> InboundMessage:
    return InboundMessage(channel, peer, "hi", chat_type="group" if group else "direct", sender_id=sender, **fields)


OWNER_ID_FORMS = [
    # (owner_ids, message, is the owner)
    (["fake:alice"], _message(), True),
    (["fake:alice"], _message(sender=None), True),  # a direct chat's peer is its sender
    (["fake:alice"], _message("other"), False),  # the same id on another channel is someone else
    (["alice"], _message("other"), True),  # a bare id means that id on every channel
    (["fake:alice"], _message("evil", sender="fake:alice"), False),  # an id cannot pose as a qualified entry
    (["evil:fake:alice"], _message("evil", sender="fake:alice"), True),  # ids with a colon are written qualified
    (["fake:team"], _message(sender=None, peer="team", group=True), False),  # a group is nobody
    (["alice"], _message(peer="team", group=True), True),
    ([], _message(from_owner=True), True),  # the channel vouches for its owner
    ([], _message(), False),
]


@pytest.mark.parametrize(("owner_ids", "message", "owner"), OWNER_ID_FORMS)
def test_how_owner_ids_are_written(owner_ids, message, owner) -> None:
    assert is_owner(message, owner_ids) is owner
