"""Plugins' pages and sockets (``clawbot_web_routes``) on the control API.

The kernel collects the routes itself when the API starts in ``clawbot run``
(:meth:`clawbot.types.GatewayControl.web_routes`); pages are public with a strict CSP,
a socket's handler sees only clients that proved the token; ``/v1/`` and a path offered by
two plugins are refused at startup, naming the plugins.
"""

from __future__ import annotations

import asyncio

import aiohttp
import clawbot_control.plugin
import pytest
from clawbot.testing import FakeChannel, plugin_from_hooks
from clawbot.types import WebPage, WebSocketRoute
from clawbot_control.settings import ControlApiError
from clawbot_control.web_routes import checked_routes

CONFIG = "[gateway]\nport = 0\n"


def routes_plugin(*routes: object) -> object:
    return plugin_from_hooks(clawbot_web_routes=lambda ctx: list(routes))


@pytest.mark.hook_emission("clawbot_web_routes")
async def test_hook_web_routes_pages_are_served_and_sockets_reach_the_plugin_only_with_the_token(make_kernel) -> None:
    reached: list[str] = []

    async def echo(peer) -> None:  # noqa: ANN001
        reached.append(peer.remote)
        async for frame in peer:
            await peer.send({"type": "echo", "frame": frame})

    page = WebPage("/echo/", b"<!doctype html><title>echo</title>")
    kernel = await make_kernel(config=CONFIG, plugins={"control": clawbot_control.plugin, "echoweb": routes_plugin(page, WebSocketRoute("/echo/ws", echo))})
    gateway = kernel.gateway(lambda m, k: None)
    api = kernel.channels.get("api")
    assert api is not None
    run = asyncio.create_task(gateway.run([FakeChannel(), api]))
    try:
        await asyncio.wait_for(api.listening.wait(), 10)
        host, port = api.address
        base = f"http://{host}:{port}"
        async with aiohttp.ClientSession() as http:
            async with http.get(f"{base}/echo/") as response:  # public: a page holds no secret
                assert response.status == 200 and await response.read() == page.body
                assert "default-src 'self'" in response.headers["Content-Security-Policy"]
                assert response.headers["Content-Type"].startswith("text/html")
            async with http.ws_connect(f"{base}/echo/ws") as socket:
                await socket.send_json({"type": "auth", "token": "wrong"})
                await socket.receive(timeout=30)
                assert socket.close_code == 4401
            assert reached == []  # the plugin never saw that client
            async with http.ws_connect(f"{base}/echo/ws", headers={"Origin": base}) as socket:
                await socket.send_json({"type": "auth", "token": api.settings.token})
                assert (await socket.receive_json(timeout=30))["type"] == "ready"
                await socket.send_json({"say": "hi"})
                assert await socket.receive_json(timeout=30) == {"type": "echo", "frame": {"say": "hi"}}
                await socket.send_str("not json")
                assert (await socket.receive_json(timeout=30))["type"] == "error"
            with pytest.raises(aiohttp.WSServerHandshakeError):
                await http.ws_connect(f"{base}/echo/ws", headers={"Origin": "https://elsewhere.example"})
        assert len(reached) == 1
    finally:
        gateway.stop()
        await asyncio.wait_for(run, 10)


@pytest.mark.parametrize(
    ("plugins", "expected"),
    [
        (
            {"one": routes_plugin(WebPage("/chat/", b"a")), "two": routes_plugin(WebPage("/chat/", b"b"))},
            r"'/chat/' is offered by two plugins: '(one' and 'two|two' and 'one)'",
        ),
        ({"sneaky": routes_plugin(WebPage("/v1/health", b"x"))}, r"plugin 'sneaky' offered the path '/v1/health'"),
        ({"relative": routes_plugin(WebPage("chat", b"x"))}, r"plugin 'relative' offered the path 'chat'"),
    ],
)
async def test_a_bad_or_clashing_route_is_a_startup_error_naming_the_plugins(make_kernel, plugins, expected) -> None:
    kernel = await make_kernel(config=CONFIG, plugins=plugins)
    with pytest.raises(ControlApiError, match=expected):
        checked_routes(await kernel.gateway(lambda m, k: None).control.web_routes())


async def test_no_api_when_the_config_turns_it_off(make_kernel) -> None:
    kernel = await make_kernel(config="[gateway]\ncontrol_api = false\n", plugins={"control": clawbot_control.plugin})
    assert kernel.channels.get("api") is None
