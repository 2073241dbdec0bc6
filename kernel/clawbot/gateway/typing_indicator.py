"""The "typing…" indicator a channel shows while a reply to a message is being written.

Chat networks show it for a few seconds only, so it is refreshed every
``capabilities.typing_interval_s`` until the reply has been sent. A channel whose
``typing`` fails is logged once per turn and otherwise ignored: an indicator never breaks
the answer.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator

from clawbot.types import Channel, InboundMessage

log = logging.getLogger(__name__)

MIN_INTERVAL_S = 0.05
"""A misconfigured interval never turns the refresh into a busy loop."""


async def _refresh(channel: Channel, message: InboundMessage, interval: float) -> None:
    logged = False
    while True:
        try:
            await channel.typing(message)
        except asyncio.CancelledError:
            raise
        except Exception:
            if not logged:
                log.warning("channel %s failed to show that a reply is being written", channel.name, exc_info=True)
                logged = True
        await asyncio.sleep(interval)


@contextlib.asynccontextmanager
async def typing_while(channel: Channel, message: InboundMessage) -> AsyncIterator[None]:
    """Show the indicator for ``message`` while the block runs (channels that say ``typing``;
    not for clawbot's own events, which nobody is waiting on)."""
    capabilities = channel.capabilities
    if not capabilities.typing or message.system_event:
        yield
        return
    interval = max(capabilities.typing_interval_s, MIN_INTERVAL_S)
    task = asyncio.create_task(_refresh(channel, message, interval), name=f"typing:{channel.name}")
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
