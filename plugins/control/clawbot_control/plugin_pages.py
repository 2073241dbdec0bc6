"""Plugins' pages and sockets (``clawbot_web_routes``), as the control API serves them.

Pages are static and public, sent with a strict Content-Security-Policy; a socket's handler
runs only after the client proved the token (:mod:`clawbot_control.sockets`), and the
socket closes when the handler returns.
"""

from __future__ import annotations

import logging
from typing import Any

from aiohttp import web
from clawbot.types import WebPage, WebRoute, WebSocketRoute

from clawbot_control.sockets import JsonPeer, authenticated_socket

log = logging.getLogger(__name__)

CSP = "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"


def add_plugin_routes(app: web.Application, routes: list[tuple[str, WebRoute]]) -> None:
    for plugin, route in routes:
        if isinstance(route, WebPage):
            app.router.add_get(route.path, _page(route))
        else:
            app.router.add_get(route.path, _socket(plugin, route))


def _page(page: WebPage) -> Any:
    headers = {
        "Content-Security-Policy": CSP,
        "X-Content-Type-Options": "nosniff",
        "Referrer-Policy": "no-referrer",
        "Cache-Control": "no-store",
    }

    async def serve_page(request: web.Request) -> web.Response:
        return web.Response(body=page.body, headers={**headers, "Content-Type": page.content_type})

    return serve_page


def _socket(plugin: str, route: WebSocketRoute) -> Any:
    async def serve_socket(request: web.Request) -> web.StreamResponse:
        peer = await authenticated_socket(request)
        if not isinstance(peer, JsonPeer):
            return peer
        try:
            await route.handler(peer)
        except Exception:
            log.exception("the socket %s of plugin %s failed", route.path, plugin)
        finally:
            await peer.socket.close()
        return peer.socket

    return serve_socket
