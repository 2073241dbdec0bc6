"""What a gateway finds in its inbox at start, left by one that died: a message whose turn
never started is answered, one whose turn had started is not run again (its sender is told
in one line), an answered one is left alone, and one whose sender is no longer let in is
dropped; a surface that answers only open requests keeps nothing; a redelivery is answered once."""

from __future__ import annotations

import asyncio

import pytest
from clawbot.gateway.inbox import Inbox, inbox_key
from clawbot.gateway.runner import INTERRUPTED_NOTICE, Gateway
from clawbot.testing import FakeChannel
from clawbot.types import ChannelCapabilities, ChannelConfig, InboundMessage

from .chatkit import eventually

MESSAGE = InboundMessage(channel="fake", peer_id="alice", sender_id="alice", text="what is on today?", message_id="m-1")
SESSION = "agent:main:main"


def left_by_a_crash(inbox: Inbox, state: str, message: InboundMessage = MESSAGE) -> None:
    key = inbox_key("fake", message)
    inbox.add(key, message, SESSION)
    if state == "started":
        inbox.start(key, message, SESSION)
    elif state == "answered":
        inbox.finish(key)


async def run_once(kernel, channel: FakeChannel, asked: list[str], until) -> None:  # noqa: ANN001
    async def respond(message: InboundMessage, session_key: str) -> str:
        asked.append(message.text)
        return f"answer to: {message.text}"

    gateway = Gateway(kernel, respond, "main")
    task = asyncio.create_task(gateway.run([channel]))
    try:
        await channel.wait_started()
        await eventually(until, timeout=10)
    finally:
        gateway.stop()
        await task


@pytest.mark.parametrize(
    ("state", "access", "sent", "asked"),
    [
        ("queued", None, ["answer to: what is on today?"], ["what is on today?"]),
        ("started", None, [INTERRUPTED_NOTICE], []),
        ("answered", None, [], []),
        ("queued", ChannelConfig(dm_policy="allowlist", allow_from=["bob"]), [], []),
    ],
    ids=["turn never started: answered", "turn started: told", "answered: left alone", "no longer let in: dropped"],
)
async def test_what_a_crash_left_in_the_inbox(make_kernel, state, access, sent, asked) -> None:
    kernel = await make_kernel()
    left_by_a_crash(Inbox(kernel.paths.root / "inbox"), state)
    channel = FakeChannel(access=access) if access is not None else FakeChannel()
    questions: list[str] = []
    await run_once(kernel, channel, questions, lambda: len(channel.sent) >= len(sent) and not Inbox(kernel.paths.root / "inbox").pending())
    assert [m.text.removeprefix("[clawbot] ") for m in channel.sent] == sent
    assert questions == asked
    assert all(m.peer_id == "alice" for m in channel.sent)
    again = FakeChannel(access=access) if access is not None else FakeChannel()  # and the next start finds nothing
    await run_once(kernel, again, questions, lambda: True)
    assert again.sent == [] and questions == asked


async def test_a_message_delivered_again_is_answered_once(make_kernel) -> None:
    kernel = await make_kernel()
    channel = FakeChannel()
    questions: list[str] = []

    async def deliver_twice() -> None:
        await channel.wait_started()
        await channel.inject(MESSAGE.text, peer_id="alice", sender_id="alice", message_id="m-1")
        await channel.inject(MESSAGE.text, peer_id="alice", sender_id="alice", message_id="m-1")

    delivering = asyncio.create_task(deliver_twice())
    await run_once(kernel, channel, questions, lambda: delivering.done() and len(channel.sent) >= 1)
    assert questions == [MESSAGE.text] and len(channel.sent) == 1


async def test_a_surface_that_answers_only_open_requests_keeps_nothing(make_kernel) -> None:
    kernel = await make_kernel()
    channel = FakeChannel("requests", ChannelCapabilities(unprompted=False))
    questions: list[str] = []

    async def ask() -> None:
        await channel.wait_started()
        await channel.inject("hello", peer_id="client-1")

    asking = asyncio.create_task(ask())
    await run_once(kernel, channel, questions, asking.done)
    assert questions == ["hello"] and not (kernel.paths.root / "inbox").exists()
