"""What every handler of the control API shares: the channel it serves, and its error answer."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from aiohttp import web

if TYPE_CHECKING:
    from clawbot_control.api_channel import ApiChannel

CHANNEL_KEY: web.AppKey[Any] = web.AppKey("channel", object)


def channel_of(request: web.Request) -> ApiChannel:
    return request.app[CHANNEL_KEY]


def json_error(status: int, text: str) -> web.Response:
    return web.json_response({"error": text}, status=status)
