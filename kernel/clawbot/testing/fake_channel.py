"""A channel for tests: inject inbound messages, inspect what the gateway sent back."""

from __future__ import annotations

import asyncio
import itertools
import secrets
from typing import Any

from clawbot import hookimpl
from clawbot.types import Channel, ChannelCapabilities, ChannelConfig, InboundMessage, InboundSink, OutboundMessage

#: the fake lets everyone in, in direct chats and groups, mentioned or not: tests send from
#: any peer. Pass ``access=ChannelConfig()`` (or claim ``[channels.<name>]``) to test the gate.
OPEN_ACCESS = ChannelConfig(dm_policy="open", allow_from=["*"], group_policy="open", require_mention=False)


class FakeChannel(Channel):
    """Behaves like a connected chat surface until :meth:`stop` or :meth:`disconnect`.

    Open to everyone by default (:data:`OPEN_ACCESS`); ``access`` gives it other rules, as a
    network channel's ``[channels.<name>]`` table would. ``capabilities`` says what it claims
    to do (a ``max_text_length``, ``typing`` ...); ``typings`` records each typing indicator
    shown, with the time it was asked for."""

    default_access = OPEN_ACCESS

    def __init__(self, name: str = "fake", capabilities: ChannelCapabilities | None = None, *, access: ChannelConfig | None = None) -> None:
        self.name = name
        if access is not None:
            self.default_access = access  # type: ignore[misc]  # this fake's own rules
        if capabilities is not None:
            self.capabilities = capabilities
        self.sent: list[OutboundMessage] = []
        self.typings: list[tuple[float, InboundMessage]] = []
        self._sink: InboundSink | None = None
        self._stopped = asyncio.Event()
        self._started = asyncio.Event()
        self._failure: BaseException | None = None
        self._ids = itertools.count(1)
        # a network's message ids differ from chat to chat: two fakes on one state directory
        # (a gateway restarted in a test) must not repeat each other's, or the second one's
        # messages look like the first one's delivered again
        self._id_prefix = secrets.token_hex(4)
        self.starts = 0

    async def start(self, sink: InboundSink) -> None:
        self._sink = sink
        self.starts += 1
        self._stopped.clear()
        self._started.set()
        await self._stopped.wait()
        if self._failure is not None:
            failure, self._failure = self._failure, None
            raise failure

    async def send(self, message: OutboundMessage) -> str:
        self.sent.append(message)
        return f"sent-{len(self.sent)}"

    async def typing(self, message: InboundMessage) -> None:
        self.typings.append((asyncio.get_running_loop().time(), message))

    async def stop(self) -> None:
        self._stopped.set()

    async def wait_started(self, timeout: float = 30.0) -> None:
        await asyncio.wait_for(self._started.wait(), timeout)

    async def disconnect(self, error: BaseException | None = None) -> None:
        """Simulate a dropped connection: ``start`` returns (or raises ``error``)."""
        self._failure = error or ConnectionError(f"{self.name} disconnected")
        self._started.clear()
        self._stopped.set()

    async def inject(self, text: str, *, peer_id: str = "user-1", wait: bool = True, **fields: Any) -> InboundMessage:
        """Deliver an inbound message as if a user had typed it.

        With ``wait`` (the default) this returns once the gateway has answered it (or the
        answer was cancelled); ``wait=False`` returns as soon as it was accepted. Other
        fields go to the :class:`InboundMessage`: like a real channel, the fake vouches for
        nobody, so pass ``from_owner=True`` (or list the sender in ``owner_ids``) for the
        owner, who alone approves commands and controls groups and the main session.
        """
        await self.wait_started()
        assert self._sink is not None
        fields = {"channel": self.name, "message_id": f"{self._id_prefix}-{next(self._ids)}", **fields}
        message = InboundMessage(peer_id=peer_id, text=text, **fields)
        answered = await self._sink(message)
        if wait and answered is not None:
            await asyncio.wait([answered])
        return message

    def texts(self) -> list[str]:
        return [m.text for m in self.sent]

    def as_plugin(self) -> object:
        """A plugin object offering this channel through ``clawbot_channels``."""
        channel = self

        class _Plugin:
            @hookimpl
            def clawbot_channels(self, ctx: Any) -> list[Channel]:
                return [channel]

        return _Plugin()
