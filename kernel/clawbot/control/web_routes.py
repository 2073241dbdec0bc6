"""Plugins' pages and sockets (``clawbot_web_routes``), served by the control API.

Collected once when ``clawbot run`` starts the API: a path must start with ``/``, may not
lie under ``/v1/`` (the API's own), and may be offered once; any of those wrong is a startup
error naming the plugin(s). Pages are static and public, sent with a strict
Content-Security-Policy; a socket's handler runs only after the client proved the token
(:mod:`clawbot.control.sockets`), and the socket closes when the handler returns.
"""

from __future__ import annotations

import logging
from typing import Any

from clawbot.control.settings import ControlApiError
from clawbot.types import WebPage, WebRoute, WebSocketRoute

log = logging.getLogger(__name__)

CSP = "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"
RESERVED = "/v1/"


async def collect_routes(kernel: Any) -> list[tuple[str, WebRoute]]:
    """(plugin, route) for every route the plugins offer; :class:`ControlApiError` on a clash."""
    contributions = await kernel.plugins.collect("clawbot_web_routes", kwargs_for=lambda plugin: {"ctx": kernel.plugin_context(plugin)})
    chosen: dict[str, tuple[str, WebRoute]] = {}
    problems = []
    for contribution in contributions:
        plugin, route = contribution.plugin, contribution.value
        if not isinstance(route, WebPage | WebSocketRoute):
            problems.append(f"plugin {plugin!r} offered {type(route).__name__}, not a WebPage or WebSocketRoute")
            continue
        path = route.path
        if not isinstance(path, str) or not path.startswith("/") or path == "/v1" or path.startswith(RESERVED):
            problems.append(f"plugin {plugin!r} offered the path {path!r}: paths start with / and {RESERVED} belongs to the API")
            continue
        if path in chosen:
            problems.append(f"the path {path!r} is offered by two plugins: {chosen[path][0]!r} and {plugin!r}")
            continue
        chosen[path] = (plugin, route)
    if problems:
        raise ControlApiError("web routes: " + "; ".join(problems))
    return list(chosen.values())


def add_plugin_routes(app: Any, routes: list[tuple[str, WebRoute]]) -> None:
    for plugin, route in routes:
        if isinstance(route, WebPage):
            app.router.add_get(route.path, _page(route))
        else:
            app.router.add_get(route.path, _socket(plugin, route))


def _page(page: WebPage) -> Any:
    from aiohttp import web

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
    from clawbot.control.sockets import JsonPeer, authenticated_socket

    async def serve_socket(request: Any) -> Any:
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
