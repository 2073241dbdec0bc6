"""A channel that shows "typing…" shows it while a reply is written, refreshed until it is sent."""

from __future__ import annotations

import asyncio
import logging

from clawbot.gateway.runner import Gateway
from clawbot.testing import FakeChannel
from clawbot.types import ChannelCapabilities

TYPING = ChannelCapabilities(typing=True, typing_interval_s=0.05)


async def _answer(make_kernel, channel: FakeChannel, seconds: float) -> None:
    async def respond(message, session_key):
        await asyncio.sleep(seconds)
        return "done"

    kernel = await make_kernel()
    gateway = Gateway(kernel, respond, "main")
    task = asyncio.create_task(gateway.run([channel]))
    await channel.inject("hi")
    gateway.stop()
    await task


async def test_typing_is_shown_at_once_and_refreshed_while_the_turn_runs(make_kernel) -> None:
    channel = FakeChannel(capabilities=TYPING)
    await _answer(make_kernel, channel, 0.3)
    assert channel.texts() == ["done"]
    assert 3 <= len(channel.typings) <= 10
    assert all(message.text == "hi" for _, message in channel.typings)


async def test_no_typing_for_a_channel_that_cannot_show_it(make_kernel) -> None:
    channel = FakeChannel()
    await _answer(make_kernel, channel, 0.1)
    assert channel.typings == [] and channel.texts() == ["done"]


class BrokenTyping(FakeChannel):
    async def typing(self, message) -> None:
        raise ConnectionError("typing endpoint down")


async def test_a_failing_typing_indicator_is_logged_once_and_the_reply_still_arrives(make_kernel, caplog) -> None:
    channel = BrokenTyping(capabilities=TYPING)
    with caplog.at_level(logging.WARNING, logger="clawbot.gateway.typing_indicator"):
        await _answer(make_kernel, channel, 0.3)
    assert channel.texts() == ["done"]
    assert len([r for r in caplog.records if "being written" in r.getMessage()]) == 1
