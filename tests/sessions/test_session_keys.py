"""Session keys follow dm_scope; groups and threads always get their own; under "main" only
the owner's DMs share the main session unless session.non_owners_share_main says otherwise."""

from __future__ import annotations

import pytest
from clawbot import InboundMessage
from clawbot.sessions.keys import session_key_for

DM = InboundMessage(channel="telegram", peer_id="123", text="hi", account_id="bot2")


@pytest.mark.parametrize(
    ("scope", "owner", "shared", "key"),
    [
        ("main", True, False, "agent:main:main"),
        ("main", False, False, "agent:main:telegram:dm:123"),
        ("main", False, True, "agent:main:main"),
        ("per-peer", True, False, "agent:main:dm:123"),
        ("per-peer", False, True, "agent:main:dm:123"),
        ("per-channel-peer", True, False, "agent:main:telegram:dm:123"),
        ("per-channel-peer", False, True, "agent:main:telegram:dm:123"),
        ("per-account-channel-peer", True, False, "agent:main:telegram:bot2:dm:123"),
        ("per-account-channel-peer", False, False, "agent:main:telegram:bot2:dm:123"),
    ],
)
def test_direct_messages_follow_dm_scope(scope, owner, shared, key) -> None:
    assert session_key_for("main", DM, scope, owner=owner, non_owners_share_main=shared) == key


def test_groups_and_threads_are_separate_whatever_the_scope() -> None:
    group = InboundMessage(channel="telegram", peer_id="-100", text="hi", chat_type="group")
    assert session_key_for("ops", group, "main", owner=True) == "agent:ops:telegram:group:-100"
    thread = InboundMessage(channel="telegram", peer_id="-100", text="hi", chat_type="group", thread_id="7")
    assert session_key_for("ops", thread, "per-peer", owner=False) == "agent:ops:telegram:group:-100:thread:7"


async def test_the_gateway_uses_the_configured_scope(make_kernel, fake_channel) -> None:
    import asyncio

    from clawbot.gateway.runner import Gateway

    kernel = await make_kernel(config='[session]\ndm_scope = "per-channel-peer"\n')
    seen = []

    async def respond(message, session_key):
        seen.append(session_key)
        return "ok"

    gateway = Gateway(kernel, respond, "main")
    task = asyncio.create_task(gateway.run([fake_channel]))
    await fake_channel.inject("hi", peer_id="alice")
    await fake_channel.inject("hi", peer_id="bob")
    gateway.stop()
    await task
    assert seen == ["agent:main:fake:dm:alice", "agent:main:fake:dm:bob"]
