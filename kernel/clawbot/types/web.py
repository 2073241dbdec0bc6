"""Pages and sockets a plugin serves through the gateway's control API (``clawbot_web_routes``).

The control API owns the server, the address and the token: a plugin never sees either.
A :class:`WebPage` is static (no secrets in it: it asks for the token itself) and is served
to anyone who can reach the address, with a strict Content-Security-Policy. A
:class:`WebSocketRoute`'s handler is called only after the client has proved it holds the
token: the first frame a client sends must be ``{"type": "auth", "token": "..."}``; a
socket that does not send the right one within a few seconds is closed with code 4401
and never reaches the handler. Tokens never travel in URLs.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, Protocol

import attrs


class WebSocketPeer(Protocol):
    """One authenticated browser (or other client) connection: JSON objects both ways."""

    remote: str
    """The client's address, for logs."""

    async def send(self, data: dict[str, Any]) -> None: ...

    def __aiter__(self) -> AsyncIterator[dict[str, Any]]:
        """The JSON objects the client sends, until it disconnects (frames that are not JSON
        objects are answered with an error frame and skipped)."""
        ...

    async def close(self, code: int = 1000, reason: str = "") -> None: ...


WebSocketHandler = Callable[[WebSocketPeer], Awaitable[None]]


@attrs.frozen
class WebPage:
    """A static resource at ``path`` (below ``/``, e.g. ``/chat/`` or ``/chat/app.js``)."""

    path: str
    body: bytes = attrs.field(repr=False)
    content_type: str = "text/html; charset=utf-8"


@attrs.frozen
class WebSocketRoute:
    """A WebSocket endpoint at ``path``; ``handler`` runs once per authenticated connection
    and the socket closes when it returns."""

    path: str
    handler: WebSocketHandler = attrs.field(repr=False)


WebRoute = WebPage | WebSocketRoute
