"""The control API as a channel: ``api``, run and restarted by the gateway like any other.

Its :meth:`start` serves the HTTP and WebSocket API (:mod:`clawbot.control.server`) until
:meth:`stop`. A client's message becomes an :class:`~clawbot.types.InboundMessage` from the
owner (whoever holds the token is) with a peer id of its own, handed to
:meth:`Gateway.accept <clawbot.gateway.runner.Gateway.accept>` with the session the client
named; what the gateway sends that peer goes back to the client's open request.
"""

from __future__ import annotations

import asyncio
import secrets
from typing import TYPE_CHECKING, Any

import attrs

from clawbot.control.streams import TurnStream
from clawbot.types import ActivitySink, Channel, ChannelCapabilities, InboundMessage, InboundSink, OutboundMessage

if TYPE_CHECKING:
    from clawbot.control.settings import ApiSettings
    from clawbot.gateway.runner import Gateway
    from clawbot.types import WebRoute

NAME = "api"


class ApiChannel(Channel):
    name = NAME
    # a client hears only the turns it asked for, while its request is open
    capabilities = ChannelCapabilities(markdown="markdown", unprompted=False)

    def __init__(self, gateway: Gateway, settings: ApiSettings, routes: list[tuple[str, WebRoute]] | None = None) -> None:
        self.gateway = gateway
        self.settings = settings
        self.routes = routes or []
        self._streams: dict[str, TurnStream] = {}
        self._stopped = asyncio.Event()
        self.address: tuple[str, int] | None = None
        self.listening = asyncio.Event()

    async def start(self, sink: InboundSink) -> None:
        from clawbot.control.server import serve

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
        task: Any = await self.gateway.accept(self, message, session_key=stream.session_key)
        if task not in stream.turns:  # its turn may have started (and registered itself) already
            stream.turns.append(task)

    def waiting(self, stream: TurnStream) -> frozenset[str]:
        return self.gateway.approvals_waiting(stream.session_key)

    def session_quiet(self, session_key: str) -> bool:
        """Nothing of ``session_key`` runs or waits, and no background work (an allowed
        command) is left that could report back to it."""
        runtime = self.gateway.runtime
        background = runtime.services.background if runtime is not None else frozenset()
        return not self.gateway.turn_running(session_key) and not any(not task.done() for task in background)

    def stream_offering(self, approval_id: str) -> TurnStream | None:
        return next((s for s in self._streams.values() if approval_id in s.offered), None)

    def health(self) -> list[dict[str, Any]]:
        """The channels' health as the gateway reports it, as JSON."""
        return [attrs.asdict(item) for item in self.gateway.health()]


async def api_channel_for(kernel: Any, gateway: Gateway) -> ApiChannel | None:
    """The control API for ``clawbot run`` (``None`` with ``gateway.control_api = false``);
    :class:`~clawbot.control.settings.ControlApiError` when it cannot run as configured."""
    if not kernel.config.gateway.control_api:
        return None
    from clawbot.control.settings import settings_for
    from clawbot.control.web_routes import collect_routes

    settings = settings_for(kernel)
    return ApiChannel(gateway, settings, await collect_routes(kernel))
