"""What a channel's :meth:`~clawbot.types.Channel.start` is given: the gateway, seen from one channel.

Calling it hands the gateway a message; ``busy`` and ``approvals_waiting`` answer for the
session a message lands in, from the gateway's own records, so a channel never has to guess
which of its messages started a turn (a line beginning with ``/`` may, and a finished
command's report starts one no channel sent). ``quit`` stops the whole gateway at once: the
channel's user asked clawbot to quit. ``control`` is the gateway as a control surface serving its
owner sees it (:class:`~clawbot.types.GatewayControl`: the control API's way in).
"""

from __future__ import annotations

import asyncio
from typing import Protocol

import attrs

from clawbot.gateway.access import Access
from clawbot.gateway.command_dispatch import command_of
from clawbot.kernel import Kernel
from clawbot.types import Channel, GatewayControl, InboundMessage


class SinkGateway(Protocol):
    """What a sink asks of the gateway that made it (``clawbot.gateway.runner.Gateway`` is one)."""

    kernel: Kernel
    access: Access

    async def accept(self, channel: Channel, message: InboundMessage, session_key: str | None = None) -> asyncio.Future[None]: ...

    def session_of(self, channel: Channel, message: InboundMessage) -> str: ...

    def turn_running(self, session_key: str) -> bool: ...

    def approvals_waiting(self, session_key: str) -> frozenset[str]: ...

    def stop(self, *, at_once: bool = False) -> None: ...

    def control(self) -> GatewayControl:
        """The gateway as a control surface (what ``ChannelSink.control`` hands a channel)."""
        ...


@attrs.frozen
class ChannelSink:
    gateway: SinkGateway
    channel: Channel

    async def __call__(self, message: InboundMessage) -> asyncio.Future[None]:
        return await self.gateway.accept(self.channel, message)

    def busy(self, message: InboundMessage) -> bool:
        return self.gateway.turn_running(self.gateway.session_of(self.channel, message))

    def approvals_waiting(self, message: InboundMessage) -> frozenset[str]:
        return self.gateway.approvals_waiting(self.gateway.session_of(self.channel, message))

    def admits(self, message: InboundMessage) -> bool:
        """Whether the access rules let ``message`` in (nothing is asked or sent): a channel
        checks before costly work, such as downloading a stranger's attachment."""
        command = command_of(self.gateway.kernel, message.text) is not None
        message = attrs.evolve(message, channel=self.channel.name)
        return self.gateway.access.admit(self.channel, message, command=command, ask=False).admitted

    @property
    def control(self) -> GatewayControl:
        return self.gateway.control()

    def quit(self) -> None:
        self.gateway.stop(at_once=True)
