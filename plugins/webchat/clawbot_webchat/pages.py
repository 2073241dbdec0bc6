"""The page, its script and style, and the socket, as the control API serves them.

The files ship in the package as they are (``static/``): no build step, nothing fetched
from elsewhere, so the API's strict Content-Security-Policy (same origin only) holds.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from importlib.resources import files

from clawbot import WebPage, WebRoute, WebSocketPeer, WebSocketRoute

FILES = (
    ("/chat/", "index.html", "text/html; charset=utf-8"),
    ("/chat/app.js", "app.js", "text/javascript; charset=utf-8"),
    ("/chat/app.css", "app.css", "text/css; charset=utf-8"),
)
SOCKET = "/chat/ws"


def routes(handler: Callable[[WebSocketPeer], Awaitable[None]]) -> list[WebRoute]:
    static = files("clawbot_webchat") / "static"
    pages: list[WebRoute] = [WebPage(path, (static / name).read_bytes(), kind) for path, name, kind in FILES]
    return [*pages, WebSocketRoute(SOCKET, handler)]
