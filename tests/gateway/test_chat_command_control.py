"""Who may use each chat command: one rule for the built-ins and every plugin command.

The owner anywhere (vouched for by the channel, or named in ``agents.defaults.owner_ids`` or
the channel's own ``owner_ids``); anyone else only in a direct chat whose session is theirs
alone. ``/approve`` and ``/deny`` are the owner's alone, in every chat, and anyone else gets
a short refusal; ``/help``, ``/commands`` and ``/whoami`` are everyone's. The table is generated from ``BUILTIN_COMMANDS``: a new built-in fails here until it
says what its rightful user sees.
"""

from __future__ import annotations

import asyncio

import pytest
from clawbot import ApprovalRequest, ChatCommand, ConfigSection
from clawbot.gateway.commands import BUILTIN_COMMANDS
from clawbot.gateway.routing import Router
from clawbot.testing import plugin_from_hooks
from clawbot.types import ChannelConfig
from clawbot_subagents.plugin import SubagentsPlugin

from ..agent.scripted import ScriptedProvider
from .chatkit import open_chat

# alice is the owner by agents.defaults, carol by the fake channel's own table
OWNER = '[agents.defaults]\nowner_ids = ["fake:alice"]\n'
OWNER += '[channels.fake]\ndm_policy = "open"\nallow_from = ["*"]\ngroup_policy = "open"\nrequire_mention = false\nowner_ids = ["carol"]\n'
FAKE_TABLE = plugin_from_hooks(clawbot_config_schema=lambda: ConfigSection("channels.fake", ChannelConfig))
PER_PEER = '\n[session]\ndm_scope = "per-peer"\n'
SHARED_MAIN = "\n[session]\nnon_owners_share_main = true\n"

ALLOWED_REPLY = {  # what each command answers someone allowed to use it (prefix)
    "stop": "Nothing is running.",
    "context": "System prompt of agent:main:",
    "approve": "Approved (once); launch is running:",
    "deny": "Denied; launch will not run:",
    "help": "clawbot answers these commands itself",
    "commands": "/help - ",
    "status": "Session: agent:main:",
    "new": "Started a new session",
    "reset": "Started a new session",
    "model": "This session uses scripted/m (configured).",
    "models": "Models (/model <name or alias> switches this session):",
    "think": "Thinking: off (the default).",
    "verbose": "Verbose (a line per tool call): off (the default).",
    "reasoning": "Reasoning shown: off (the default).",
    "usage": "Usage footer: off (the default).",
    "subagents": "This session has started no sub-agents since clawbot started.",  # clawbot-subagents' command
    "whoami": "Channel: fake",
    "compact": "No compaction strategy is installed",
    "ping": "pong",  # a plugin's command
}
PLUGIN_COMMANDS = ("ping", "subagents")
COMMANDS = [*BUILTIN_COMMANDS, *PLUGIN_COMMANDS]
OWNER_ONLY_COMMANDS = ("approve", "deny")
OPEN_COMMANDS = ("help", "commands", "whoami")

SENDERS = {
    # who: (message fields, extra config, may control the session, is the owner)
    "the owner in a group": ({"peer_id": "team", "chat_type": "group", "sender_id": "alice"}, "", True, True),
    "a member in a group": ({"peer_id": "team", "chat_type": "group", "sender_id": "mallory"}, "", False, False),
    "a group message without a sender": ({"peer_id": "team", "chat_type": "group"}, "", False, False),
    "a stranger in the owner's main session": ({"peer_id": "bob"}, SHARED_MAIN, False, False),
    "a stranger in their own session": ({"peer_id": "bob"}, PER_PEER, True, False),
    "a stranger in their own session by default": ({"peer_id": "bob"}, "", True, False),
    "the channel's owner in a group": ({"peer_id": "team", "chat_type": "group", "sender_id": "carol"}, "", True, True),
    "the channel's owner in a direct chat": ({"peer_id": "carol"}, "", True, True),
    "the channel's owner id on another channel's name": ({"peer_id": "team", "chat_type": "group", "sender_id": "fake:carol"}, "", False, False),
    "the owner marked by the channel": ({"peer_id": "me", "from_owner": True}, "", True, True),
}


def test_every_built_in_command_is_in_the_table() -> None:
    from clawbot.gateway import commands

    assert set(ALLOWED_REPLY) == {*BUILTIN_COMMANDS, *PLUGIN_COMMANDS}
    assert set(OWNER_ONLY_COMMANDS) == set(commands.OWNER_ONLY_COMMANDS)
    assert set(OPEN_COMMANDS) == set(commands.OPEN_COMMANDS)


@pytest.mark.parametrize("who", SENDERS)
@pytest.mark.parametrize("command", COMMANDS)
async def test_who_may_use_each_chat_command(make_kernel, fake_channel, command, who) -> None:
    fields, extra, controls, owner = SENDERS[who]
    pinged: list[str] = []
    commands = plugin_from_hooks(clawbot_chat_commands=lambda ctx: [ChatCommand("ping", "answers", lambda c: pinged.append(c.args) or "pong")])
    provider = ScriptedProvider("the agent answered")
    chat = await open_chat(
        make_kernel, fake_channel, provider, config=OWNER + extra, plugins={"cmds": commands, "subagents": SubagentsPlugin(), "fake-table": FAKE_TABLE}
    )
    probe = await fake_channel.inject("hello", **fields)  # the session exists and we know its key
    key = Router.for_config(chat.kernel.config, "main").route(probe).session_key

    async def nothing(decision):  # noqa: ANN001, ANN202
        return None

    ticket = chat.runtime.approvals.register(key, ApprovalRequest("launch", "launch --rocket", "why", nothing, allow_always=False))
    args = f" {ticket.id}" if command in OWNER_ONLY_COMMANDS else ""
    await fake_channel.inject(f"/{command}{args}", **fields)
    reply = fake_channel.sent[-1]
    allowed = owner if command in OWNER_ONLY_COMMANDS else True if command in OPEN_COMMANDS else controls
    if allowed:
        assert reply.text.startswith(ALLOWED_REPLY[command])
    else:
        assert reply.text == f"Only the owner can use /{command} in this chat."
    assert reply.notice is (allowed is False or command not in ("context", *PLUGIN_COMMANDS))  # clawbot's own words
    assert pinged == ([""] if allowed and command == "ping" else [])
    still_pending = [t.id for t in chat.runtime.approvals.pending_for(key)]
    assert still_pending == ([] if allowed and command in OWNER_ONLY_COMMANDS else [ticket.id])
    assert provider.requests[-1].messages[-1].text.endswith("hello")  # the command never reached the model
    await chat.close()


async def test_a_member_cannot_stop_the_owners_turn_in_a_group(make_kernel, fake_channel) -> None:
    provider = ScriptedProvider("the owner's answer", delay=0.3)
    chat = await open_chat(make_kernel, fake_channel, provider, config=OWNER, plugins={"fake-table": FAKE_TABLE})
    group = {"peer_id": "team", "chat_type": "group"}
    await fake_channel.inject("think hard", **group, sender_id="alice", wait=False)
    while not provider.requests:
        await asyncio.sleep(0.01)
    await fake_channel.inject("/stop", **group, sender_id="mallory")
    assert fake_channel.texts() == ["Only the owner can use /stop in this chat."]
    async with asyncio.timeout(5):
        while len(fake_channel.sent) < 2:
            await asyncio.sleep(0.01)
    assert fake_channel.texts()[-1] == "the owner's answer"  # the turn ran to its end
    await chat.close()
