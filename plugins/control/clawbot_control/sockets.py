"""WebSockets of the control API: the Origin check, the first-frame token, the JSON peer.

A browser page from another site may open a socket to 127.0.0.1 (browsers allow it), so
every socket whose Origin names another host than the API's own is refused before the
upgrade. Then the client's first frame must be ``{"type": "auth", "token": ...}`` within
:data:`AUTH_TIMEOUT_S`, else the socket is closed with 4401 and nothing behind it runs.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import urlsplit

from aiohttp import WSMsgType, web
from clawbot.control.token import token_matches

from clawbot_control.request_context import channel_of
from clawbot_control.turns import answer_approval, turn_events

AUTH_TIMEOUT_S = 5.0
UNAUTHORIZED = 4401


def origin_allowed(request: web.Request) -> bool:
    """No Origin (a program, not a browser), or the API's own scheme-less host:port."""
    origin = request.headers.get("Origin")
    if origin is None:
        return True
    parts = urlsplit(origin)
    return parts.scheme in ("http", "https") and parts.netloc.lower() == request.host.lower()


class JsonPeer:
    """A :class:`clawbot.types.WebSocketPeer` over an aiohttp socket."""

    def __init__(self, socket: web.WebSocketResponse, remote: str) -> None:
        self.socket = socket
        self.remote = remote

    async def send(self, data: dict[str, Any]) -> None:
        await self.socket.send_json(data)

    async def close(self, code: int = 1000, reason: str = "") -> None:
        await self.socket.close(code=code, message=reason.encode("utf-8")[:120])

    async def __aiter__(self) -> AsyncIterator[dict[str, Any]]:
        async for frame in self.socket:
            if frame.type is not WSMsgType.TEXT:
                if frame.type in (WSMsgType.CLOSE, WSMsgType.CLOSING, WSMsgType.CLOSED, WSMsgType.ERROR):
                    return
                continue
            try:
                data = json.loads(frame.data)
            except ValueError:
                data = None
            if not isinstance(data, dict):
                await self.send({"type": "error", "text": "every frame must be a JSON object"})
                continue
            yield data


async def authenticated_socket(request: web.Request) -> JsonPeer | web.StreamResponse:
    """The upgraded socket once its first frame proved the token; otherwise what to answer
    (a refusal before the upgrade, or the closed socket)."""
    channel = channel_of(request)
    if not origin_allowed(request):
        return web.json_response({"error": "this socket does not accept pages from another site (Origin)"}, status=403)
    socket = web.WebSocketResponse(heartbeat=30.0)
    await socket.prepare(request)
    try:
        frame = await socket.receive(timeout=AUTH_TIMEOUT_S)
        data = json.loads(frame.data) if frame.type is WSMsgType.TEXT else None
    except (TimeoutError, ValueError):
        data = None
    token = data.get("token") if isinstance(data, dict) and data.get("type") == "auth" else None
    if not isinstance(token, str) or not token_matches(channel.settings.token, token):
        await socket.close(code=UNAUTHORIZED, message=b"unauthorized")
        return socket
    await socket.send_json({"type": "ready"})
    return JsonPeer(socket, request.remote or "")


async def api_socket(request: web.Request) -> web.StreamResponse:
    """``/v1/ws``: ``send`` frames run turns (events come back as on ``POST /v1/turns``,
    each with the ``request`` id the frame gave); ``approve`` frames answer approvals."""
    peer = await authenticated_socket(request)
    if not isinstance(peer, JsonPeer):
        return peer
    channel = channel_of(request)
    running: set[asyncio.Task[None]] = set()

    async def run_turn(frame: dict[str, Any]) -> None:
        tag = {"request": frame["request"]} if isinstance(frame.get("request"), str | int) else {}
        async for event in turn_events(channel, frame):
            await peer.send({**event, **tag})

    try:
        async for frame in peer:
            kind = frame.get("type")
            if kind == "send":
                task = asyncio.create_task(run_turn(frame))
                running.add(task)
                task.add_done_callback(running.discard)
            elif kind == "approve":
                status, body = await answer_approval(channel, str(frame.get("id", "")), frame.get("choice"))
                await peer.send({"type": "approval", "status": status, **body})
            else:
                await peer.send({"type": "error", "text": "unknown frame type: expected send or approve"})
    finally:
        for task in running:
            task.cancel()
    return peer.socket
