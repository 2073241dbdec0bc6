"""The control API as a channel: ``api``, run and restarted by the gateway like any other.

Its :meth:`start` serves the HTTP and WebSocket API (:mod:`clawbot_control.server`) until
:meth:`stop`. A client's message becomes an :class:`~clawbot.types.InboundMessage` from the
owner (whoever holds the token is) with a peer id of its own, handed to the gateway through
``sink.control`` (:class:`~clawbot.types.GatewayControl`) with the session the client named;
what the gateway sends that peer goes back to the client's open request.
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Callable
from typing import Any

from clawbot.types import ActivitySink, Channel, ChannelCapabilities, GatewayControl, InboundMessage, InboundSink, OutboundMessage, WebRoute

from clawbot_control.settings import ApiSettings, ControlApiError, check_bind
from clawbot_control.streams import TurnStream
from clawbot_control.web_routes import checked_routes

NAME = "api"


class ApiChannel(Channel):
    name = NAME
    # a client hears only the turns it asked for, while its request is open
    capabilities = ChannelCapabilities(markdown="markdown", unprompted=False)

    def __init__(self, settings: ApiSettings | Callable[[], ApiSettings], routes: list[tuple[str, WebRoute]] | None = None) -> None:
        """``settings`` or how to make them when the API starts (the token is created then);
        ``routes``: the plugins' pages and sockets, or ``None`` to collect them when it starts."""
        self._settings_for = settings if callable(settings) else None
        self._settings = settings if isinstance(settings, ApiSettings) else None
        self._collect = routes is None
        self.routes = routes or []
        self._control: GatewayControl | None = None
        self._streams: dict[str, TurnStream] = {}
        self._stopped = asyncio.Event()
        self.address: tuple[str, int] | None = None
        self.listening = asyncio.Event()

    @property
    def settings(self) -> ApiSettings:
        if self._settings is None:
            assert self._settings_for is not None
            self._settings = self._settings_for()
        return self._settings

    @property
    def control(self) -> GatewayControl:
        """The gateway this API serves; set when it starts."""
        if self._control is None:
            raise ControlApiError("the control API is not running in a gateway")
        return self._control

    def available(self) -> str | None:
        try:
            check_bind(self.settings.host, self.settings.explicit_bind)
        except ControlApiError as exc:  # never beyond loopback unless asked for in the file itself
            return str(exc)
        return None

    async def start(self, sink: InboundSink) -> None:
        from clawbot_control.server import serve  # aiohttp: only once the API starts

        self._control = sink.control
        if self._collect:
            self.routes = checked_routes(await self._control.web_routes())
        self._stopped.clear()
        await serve(self, self._stopped)

    async def stop(self) -> None:
        self._stopped.set()

    async def send(self, message: OutboundMessage) -> str | None:
        stream = self._streams.get(message.peer_id)
        if stream is not None:  # a client that went away misses it; the transcript has it
            stream.deliver(message)
        return None

    def live(self, message: InboundMessage) -> ActivitySink | None:
        stream = self._streams.get(message.peer_id)
        if stream is None:
            return None
        # called at the start of each turn, inside it: a finished command's report is one too
        stream.turn_started(asyncio.current_task())
        return stream.activity

    # -- what the server's handlers use --------------------------------------------------

    def open_stream(self, session_key: str, agent_id: str) -> TurnStream:
        peer_id = f"client-{secrets.token_hex(6)}"
        stream = TurnStream(peer_id, session_key, agent_id)
        self._streams[peer_id] = stream
        return stream

    def close_stream(self, stream: TurnStream) -> None:
        self._streams.pop(stream.peer_id, None)

    async def submit(self, stream: TurnStream, text: str) -> None:
        """Hand ``text`` to the gateway as the owner's message in the stream's session."""
        message = InboundMessage(channel=NAME, peer_id=stream.peer_id, text=text, sender_id=stream.peer_id, sender_name="control API", from_owner=True)
        task: Any = await self.control.submit(self, message, stream.session_key)
        if task not in stream.turns:  # its turn may have started (and registered itself) already
            stream.turns.append(task)

    def waiting(self, stream: TurnStream) -> frozenset[str]:
        return self.control.approvals_waiting(stream.session_key)

    def stream_offering(self, approval_id: str) -> TurnStream | None:
        return next((s for s in self._streams.values() if approval_id in s.offered), None)
