"""Who gets in, decided before commands and the agent: dm_policy, allow_from, group_policy,
group_allow_from, mention gating, and the owner who is always in.

Real gateway, the fake channel given each case's access rules (as a network channel's
``[channels.<name>]`` table would), and the pairing plugin answering strangers, as in the
default install; the responder is a plain function, so "agent" below means that a turn ran.
"""

from __future__ import annotations

import asyncio

import clawbot_pairing.plugin
import pytest
from clawbot import ConfigSection
from clawbot.gateway.runner import Gateway
from clawbot.testing import FakeChannel, plugin_from_hooks
from clawbot.types import ChannelConfig

STRICT = ChannelConfig()  # the defaults every real channel starts from
OPEN = {"dm_policy": "open", "allow_from": ["*"]}
DM = {"peer_id": "bob"}
TEAM = {"peer_id": "team", "chat_type": "group", "sender_id": "mallory"}
MENTIONED = {**TEAM, "mentioned": True}
OWNER = {"from_owner": True}
REFUSED_APPROVE = "Only the owner can use /approve in this chat."

CASES = {
    # name: (access settings, message fields, text, what happens: "agent", "silent", "pairing" or a reply)
    "a stranger, pairing (the default)": ({}, DM, "hi", "pairing"),
    "a stranger's command, pairing": ({}, DM, "/status", "pairing"),
    "allow_from, pairing": ({"allow_from": ["bob"]}, DM, "hi", "agent"),
    "allow_from with the channel's name": ({"allow_from": ["fake:bob"]}, DM, "hi", "agent"),
    "allow_from naming someone else": ({"dm_policy": "allowlist", "allow_from": ["carol"]}, DM, "hi", "silent"),
    "a stranger, allowlist": ({"dm_policy": "allowlist"}, DM, "hi", "silent"),
    "allow_from, allowlist": ({"dm_policy": "allowlist", "allow_from": ["bob"]}, DM, "hi", "agent"),
    "a stranger, open": (OPEN, DM, "hi", "agent"),
    "a stranger, disabled": ({"dm_policy": "disabled", "allow_from": ["bob"]}, DM, "hi", "silent"),
    "the owner, disabled": ({"dm_policy": "disabled"}, {**DM, **OWNER}, "hi", "agent"),
    "the owner, pairing": ({}, {**DM, **OWNER}, "hi", "agent"),
    "a group not listed (the default)": ({}, MENTIONED, "hi", "silent"),
    "a listed group, mentioned": ({"groups": ["team"]}, MENTIONED, "hi", "agent"),
    "a listed group with the channel's name": ({"groups": ["fake:team"]}, MENTIONED, "hi", "agent"),
    "a listed group, not mentioned": ({"groups": ["team"]}, TEAM, "hi", "silent"),
    "every group listed": ({"groups": ["*"]}, MENTIONED, "hi", "agent"),
    "open groups, mentioned": ({"group_policy": "open"}, MENTIONED, "hi", "agent"),
    "open groups, mention not required": ({"group_policy": "open", "require_mention": False}, TEAM, "hi", "agent"),
    "groups disabled": ({"group_policy": "disabled", "groups": ["team"]}, MENTIONED, "hi", "silent"),
    "a sender not in group_allow_from": ({"group_policy": "open", "group_allow_from": ["carol"]}, MENTIONED, "hi", "silent"),
    "a sender in group_allow_from": ({"group_policy": "open", "group_allow_from": ["mallory"]}, MENTIONED, "hi", "agent"),
    "a thread of a listed group": ({"groups": ["team"]}, {**MENTIONED, "chat_type": "thread", "thread_id": "7"}, "hi", "agent"),
    "a member's command, not mentioned": ({"groups": ["team"]}, TEAM, "/status", "silent"),
    "a member's /approve, mentioned": ({"groups": ["team"]}, MENTIONED, "/approve abc123", REFUSED_APPROVE),
    "the owner in a group not listed, mentioned": ({}, {**MENTIONED, **OWNER}, "hi", "agent"),
    "the owner chatting in a group, not mentioned": ({}, {**TEAM, **OWNER}, "hi", "silent"),
    "the owner's command in a group, not mentioned": ({}, {**TEAM, **OWNER}, "/stop", "Nothing is running."),
    "a stranger's DM on groups-only settings": ({"group_policy": "open"}, DM, "hi", "pairing"),
}


async def _run(gateway: Gateway, channel: FakeChannel, *messages: tuple[str, dict]) -> None:
    task = asyncio.create_task(gateway.run([channel]))
    for text, fields in messages:
        await channel.inject(text, **fields)
    gateway.stop()
    await task


async def _echo(message, session_key):  # noqa: ANN001, ANN202
    return f"agent: {message.text}"


@pytest.mark.parametrize("case", CASES)
async def test_who_gets_in(make_kernel, case) -> None:
    settings, fields, text, outcome = CASES[case]
    channel = FakeChannel(access=ChannelConfig(**settings))
    kernel = await make_kernel(plugins={"fake": channel.as_plugin(), "pairing": clawbot_pairing.plugin})
    await _run(Gateway(kernel, _echo, "main"), channel, (text, fields))
    sent = channel.texts()
    if outcome == "agent":
        assert sent == [f"agent: {text}"]
    elif outcome == "silent":
        assert sent == []
    elif outcome == "pairing":
        assert len(sent) == 1 and "pairing code" in sent[0] and "clawbot pairing approve fake " in sent[0]
        assert channel.sent[0].notice  # clawbot's own words, shown as such
    else:
        assert sent == [outcome]
    await kernel.aclose()


async def test_the_channels_table_decides_over_what_the_channel_declares(make_kernel) -> None:
    """The fake is open by default; a ``[channels.fake]`` table of a ChannelConfig class
    replaces that, and its ``owner_ids`` make a sender the owner there."""
    channel = FakeChannel()
    table = plugin_from_hooks(clawbot_config_schema=lambda: ConfigSection("channels.fake", ChannelConfig))
    config = '[channels.fake]\ndm_policy = "allowlist"\nowner_ids = ["alice"]\n'
    kernel = await make_kernel(plugins={"fake": channel.as_plugin(), "table": table, "pairing": clawbot_pairing.plugin}, config=config)
    await _run(Gateway(kernel, _echo, "main"), channel, ("from bob", {"peer_id": "bob"}), ("from alice", {"peer_id": "alice"}))
    assert channel.texts() == ["agent: from alice"]
    await kernel.aclose()


async def test_without_a_table_a_real_channel_gets_the_safe_defaults(make_kernel) -> None:
    class Quiet(FakeChannel):
        default_access = STRICT  # what a channel that declares nothing has

    channel = Quiet("quiet")
    kernel = await make_kernel(plugins={"quiet": channel.as_plugin(), "pairing": clawbot_pairing.plugin})
    await _run(Gateway(kernel, _echo, "main"), channel, ("hi", MENTIONED), ("hi", {"peer_id": "bob"}))
    assert len(channel.sent) == 1 and "pairing code" in channel.sent[0].text
    await kernel.aclose()


async def test_a_channel_may_ask_whether_a_message_gets_in_without_a_code_being_asked_for(make_kernel) -> None:
    """``sink.admits`` lets a channel skip costly work (a stranger's download) and changes
    nothing: the stranger gets the code only when the message itself is handed over."""
    seen: list[bool] = []

    class Checking(FakeChannel):
        default_access = STRICT

    channel = Checking("checking")
    kernel = await make_kernel(plugins={"checking": channel.as_plugin(), "pairing": clawbot_pairing.plugin})
    gateway = Gateway(kernel, _echo, "main")
    task = asyncio.create_task(gateway.run([channel]))
    await channel.wait_started()
    from clawbot.gateway.sink import ChannelSink
    from clawbot.types import InboundMessage

    sink = ChannelSink(gateway, channel)
    seen.append(sink.admits(InboundMessage(channel="checking", peer_id="bob", text="hi")))
    seen.append(sink.admits(InboundMessage(channel="checking", peer_id="me", text="hi", from_owner=True)))
    assert not (kernel.paths.root / "pairing" / "checking.json").exists() and channel.sent == []
    await channel.inject("hi", peer_id="bob")
    gateway.stop()
    await task
    assert seen == [False, True]
    assert len(channel.sent) == 1 and "pairing code" in channel.sent[0].text
    await kernel.aclose()
