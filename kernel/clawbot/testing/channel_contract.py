"""Checks of the channel contract, for any channel's own tests (docs/plugins/writing-plugins.md).

A channel plugin's test suite describes how to run its channel for real (``clawbot run`` in
a subprocess, the channel talking to a fake of its network, the model the fake LLM) as a
:class:`ChannelUnderTest`, and awaits the checks here with it::

    from clawbot.testing.channel_contract import answered_or_told_after_a_crash

    async def test_a_crash_loses_no_message(my_channel_under_test, fake_llm_thread):
        await answered_or_told_after_a_crash(my_channel_under_test, fake_llm_thread)

The checks use only what a user sees: what the channel's network received.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from typing import Any, Protocol

INTERRUPTED_WORDS = "stopped unexpectedly"
"""What the one-line notice to the sender of a message whose turn a crash cut off says."""

CONTRACT_CONFIG = "[gateway]\nmax_concurrent = 1\n"
"""What :meth:`ChannelUnderTest.run` must add to the config: one turn at a time, so a second
chat's message waits while the first one's turn runs."""


class ChannelUnderTest(Protocol):
    """A channel run for real, as its tests drive it. Chats are ``0`` and ``1``: two people
    the channel's access rules let in (direct chats of allowed senders, say)."""

    def run(self) -> AbstractAsyncContextManager[Any]:
        """``clawbot run`` with the channel on its fake network, the model on the fake LLM
        the check is given and :data:`CONTRACT_CONFIG` in its config; entered once the
        channel receives; the value is the ``asyncio.subprocess.Process`` (it may be killed
        inside the block). Entered again, the same state directory is used."""
        ...

    async def write(self, chat: int, text: str) -> None:
        """A person writes ``text`` in ``chat``."""

    def confirmed(self, chat: int) -> bool:
        """Whether the channel told its network it has the last message written in ``chat``
        (an offset, an acknowledgement): from then on the network will not deliver it again."""
        ...

    def received(self, chat: int) -> list[str]:
        """The texts the bot sent to ``chat``, oldest first, as the person sees them."""
        ...


async def _until(condition: Callable[[], bool], what: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")
        await asyncio.sleep(0.05)


async def answered_or_told_after_a_crash(channel: ChannelUnderTest, llm: Any, *, timeout: float = 30.0) -> None:
    """SIGKILL the gateway while chat 0's turn runs and chat 1's message waits for it; after
    the restart chat 0's sender gets one notice that the answer was cut off (its turn had
    started: the model is not asked again, its side effects are not repeated) and chat 1's
    message is answered, once. ``llm`` is the fake LLM the channel's ``run`` uses."""
    llm.fail("slow", delay=120)  # the first turn hangs until the gateway is killed
    llm.reply("The answer to the message that waited.")
    async with channel.run() as process:
        await channel.write(0, "a message whose answer a crash cuts off")
        await _until(lambda: len(llm.requests) == 1, "the first turn to ask the model", timeout)
        await channel.write(1, "a message that waits for the first turn")
        await _until(lambda: channel.confirmed(1), "the channel to confirm the waiting message to its network", timeout)
        os.kill(process.pid, signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError):
            await asyncio.wait_for(process.wait(), timeout)
    async with channel.run():
        await _until(lambda: any(INTERRUPTED_WORDS in text for text in channel.received(0)), "the notice to the first sender", timeout)
        await _until(lambda: bool(channel.received(1)), "the answer to the message that waited", timeout)
    (notice,) = channel.received(0)  # the notice only: no answer from a turn run again
    assert INTERRUPTED_WORDS in notice, notice
    assert channel.received(1) == ["The answer to the message that waited."], channel.received(1)
    assert len(llm.requests) == 2, "the turn a crash cut off was run again"
