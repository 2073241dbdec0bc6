"""The control API's aiohttp server: built, listening, announced, and torn down.

Every ``/v1/`` request but the WebSocket needs ``Authorization: Bearer <token>``; the
WebSocket proves it in its first frame (:mod:`clawbot_control.sockets`). The access log
names the method, path and status only: no header (the token) is ever written.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

from aiohttp import web
from clawbot.control.endpoint import remove_endpoint, write_endpoint
from clawbot.control.token import bearer, token_matches

from clawbot_control import plugin_pages, routes, sockets
from clawbot_control.request_context import CHANNEL_KEY, channel_of, json_error
from clawbot_control.settings import check_bind, is_loopback

if TYPE_CHECKING:
    from clawbot_control.api_channel import ApiChannel

log = logging.getLogger(__name__)
# named as the kernel's logger was: a user's logging configuration keeps finding it
access_log = logging.getLogger("clawbot.control.access")

ACCESS_FORMAT = '%a "%r" %s %b %Tf'
#: the API's own endpoints that authenticate themselves (a socket proves the token in a frame)
SELF_AUTHENTICATED = ("/v1/ws",)

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]", "::1")


@web.middleware
async def loopback_host_only(request: web.Request, handler: Any) -> web.StreamResponse:
    """On loopback, a request must name a loopback host: a page of another site whose name
    was pointed at 127.0.0.1 (DNS rebinding) gets nothing, not even the login page."""
    channel = channel_of(request)
    if is_loopback(channel.settings.host):
        host = (request.host or "").lower()
        name = host.rsplit(":", 1)[0] if not host.endswith("]") else host
        if name not in LOOPBACK_NAMES:
            return json_error(421, "this address serves only requests for 127.0.0.1 or localhost")
    return await handler(request)


@web.middleware
async def require_token(request: web.Request, handler: Any) -> web.StreamResponse:
    if not request.path.startswith("/v1/") or request.path in SELF_AUTHENTICATED:
        return await handler(request)
    channel = channel_of(request)
    if not token_matches(channel.settings.token, bearer(request.headers.get("Authorization"))):
        return json_error(401, "missing or wrong token: send Authorization: Bearer <token> (the token is in <state dir>/gateway/token)")
    return await handler(request)


def build_app(channel: ApiChannel) -> web.Application:
    app = web.Application(middlewares=[loopback_host_only, require_token], client_max_size=4 * 1024 * 1024)
    app[CHANNEL_KEY] = channel
    routes.add_routes(app)
    app.router.add_get("/v1/ws", sockets.api_socket)
    plugin_pages.add_plugin_routes(app, channel.routes)
    return app


async def serve(channel: ApiChannel, stopped: asyncio.Event) -> None:
    """Listen until ``stopped`` is set; the endpoint file exists exactly while it listens."""
    settings = channel.settings
    check_bind(settings.host, settings.explicit_bind)
    runner = web.AppRunner(build_app(channel), access_log=access_log, access_log_format=ACCESS_FORMAT, handler_cancellation=True, shutdown_timeout=1.0)
    await runner.setup()
    try:
        site = web.TCPSite(runner, settings.host, settings.port, reuse_address=True)
        try:
            await site.start()
        except OSError as exc:  # raised again, so the gateway retries with backoff: the port may free up
            raise ConnectionError(
                f"the control API cannot listen on {settings.host}:{settings.port}: {exc.strerror or exc} "
                "(another clawbot gateway? `clawbot status` tells; or set gateway.port)"
            ) from None
        server: Any = site._server
        sockets = server.sockets if server is not None else []
        host, port = sockets[0].getsockname()[:2]
        channel.address = (host, port)
        write_endpoint(settings.state_root, host, port)
        channel.listening.set()
        log.info("control API listening on %s:%s", host, port)
        try:
            await stopped.wait()
        finally:
            channel.listening.clear()
            remove_endpoint(settings.state_root)
    finally:
        await runner.cleanup()
