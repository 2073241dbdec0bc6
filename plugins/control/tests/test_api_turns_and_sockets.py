"""Turns through the control API: streamed over HTTP and over the WebSocket, which first
needs the token in its first frame and refuses pages of other sites.

A real server on 127.0.0.1 in front of a real Gateway whose responder streams its reply.
"""

from __future__ import annotations

import asyncio
import json

import aiohttp
import pytest
from clawbot.testing import FakeChannel
from clawbot_control import sockets
from clawbot_control.api_channel import ApiChannel
from clawbot_control.settings import ApiSettings
from clawbot_control.sockets import UNAUTHORIZED

from .apihelpers import auth, gateway_serving, serving, url


async def test_a_turn_streams_its_text_then_the_reply_in_the_session_named(make_kernel) -> None:
    kernel = await make_kernel()
    seen: list[tuple[str, str, bool]] = []

    async def respond(message, session_key, live=None):  # noqa: ANN001, ANN202
        seen.append((message.channel, session_key, message.from_owner))
        await live.text("one ")
        await live.text("two")
        return "one two"

    async with serving(kernel, respond) as api, aiohttp.ClientSession() as http:
        async with http.post(url(api, "/v1/turns"), json={"text": "count", "session": "work"}, headers=auth(api)) as response:
            assert response.headers["Content-Type"].startswith("application/x-ndjson")
            events = [json.loads(line) async for line in response.content]
    assert events[0] == {"type": "start", "agent": "main", "session": "agent:main:work", "command": None}
    deltas = [e["delta"] for e in events if e["type"] == "text"]
    assert len(deltas) >= 2 and "".join(deltas) == "one two"  # streamed in pieces, as written
    assert {"type": "reply", "text": "one two"} in events
    assert events[-1]["type"] == "done"
    assert seen == [("api", "agent:main:work", True)]  # the token holder is the owner


@pytest.mark.parametrize(
    ("body", "key"),
    [({}, "text"), ({"text": ""}, "text"), ({"text": "hi", "agent": "ghost"}, "ghost"), ({"text": "hi", "session": 3}, "session")],
)
async def test_a_bad_turn_request_is_an_error_event_naming_the_key(make_kernel, body, key) -> None:
    kernel = await make_kernel()
    async with serving(kernel) as api, aiohttp.ClientSession() as http:
        async with http.post(url(api, "/v1/turns"), json=body, headers=auth(api)) as response:
            events = [json.loads(line) async for line in response.content]
        async with http.post(url(api, "/v1/turns"), data=b"[not json", headers=auth(api)) as response:
            assert response.status == 400
    assert events[0]["type"] == "error" and key in events[0]["text"] and events[-1] == {"type": "done"}


async def test_a_socket_without_the_token_in_its_first_frame_is_closed_4401(make_kernel, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sockets, "AUTH_TIMEOUT_S", 0.3)  # waiting out the real 5 s proves nothing more
    kernel = await make_kernel()
    async with serving(kernel) as api, aiohttp.ClientSession() as http:
        for first in (None, {"type": "auth", "token": "wrong"}, {"type": "send", "text": "hi"}, {"type": "auth"}):
            async with http.ws_connect(url(api, "/v1/ws")) as socket:
                if first is not None:
                    await socket.send_json(first)
                message = await socket.receive(timeout=30)
                assert message.type is aiohttp.WSMsgType.CLOSE and socket.close_code == UNAUTHORIZED, (first, message)


async def test_a_socket_sends_turns_and_gets_the_same_events(make_kernel) -> None:
    kernel = await make_kernel()
    async with serving(kernel) as api, aiohttp.ClientSession() as http, http.ws_connect(url(api, "/v1/ws")) as socket:
        await socket.send_json({"type": "auth", "token": api.settings.token})
        assert (await socket.receive_json(timeout=30)) == {"type": "ready"}
        await socket.send_json({"type": "send", "text": "there", "session": "web", "request": 7})
        events = []
        while not events or events[-1]["type"] != "done":
            events.append(await socket.receive_json(timeout=30))
    assert all(e["request"] == 7 for e in events)
    assert [e["type"] for e in events if e["type"] != "text"] == ["start", "reply", "done"]
    assert "".join(e["delta"] for e in events if e["type"] == "text").rstrip() == "hello"  # what the turn streamed
    assert events[0]["session"] == "agent:main:web" and events[-2]["text"] == "hello there"


@pytest.mark.parametrize(
    ("origin", "allowed"),
    [(None, True), ("same", True), ("http://evil.example", False), ("http://127.0.0.1:1", False), ("null", False)],
)
async def test_a_socket_from_another_sites_page_is_refused(make_kernel, origin, allowed) -> None:
    kernel = await make_kernel()
    async with serving(kernel) as api, aiohttp.ClientSession() as http:
        host, port = api.address
        headers = {} if origin is None else {"Origin": f"http://{host}:{port}" if origin == "same" else origin}
        if allowed:
            async with http.ws_connect(url(api, "/v1/ws"), headers=headers) as socket:
                await socket.send_json({"type": "auth", "token": api.settings.token})
                assert (await socket.receive_json(timeout=30))["type"] == "ready"
            return
        with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
            await http.ws_connect(url(api, "/v1/ws"), headers=headers)
        assert refused.value.status == 403


async def test_health_and_sessions_report_the_gateway(make_kernel) -> None:
    kernel = await make_kernel()
    async with serving(kernel) as api, aiohttp.ClientSession() as http:
        async with http.post(url(api, "/v1/turns"), json={"text": "hi"}, headers=auth(api)) as response:
            await response.read()
        async with http.get(url(api, "/v1/health"), headers=auth(api)) as response:
            health = await response.json()
        async with http.get(url(api, "/v1/sessions"), headers=auth(api)) as response:
            sessions = await response.json()
    assert {c["name"] for c in health["channels"]} == {"fake", "api"}
    assert health["pid"] > 0 and health["uptime_s"] >= 0 and health["running_turns"] == []
    assert health["undelivered"] == []  # no reply went nowhere
    assert isinstance(sessions, list)


async def test_a_reply_with_nowhere_to_go_is_in_the_health_report(make_kernel) -> None:
    kernel = await make_kernel()
    async with gateway_serving(kernel) as (gateway, api), aiohttp.ClientSession() as http:
        gateway.report_undelivered("a heartbeat reply of agent main: heartbeat.target has no chat to send it to")
        async with http.get(url(api, "/v1/health"), headers=auth(api)) as response:
            health = await response.json()
    (undelivered,) = health["undelivered"]
    assert "no chat to send it to" in undelivered["what"] and undelivered["at"] > 0


async def test_the_api_keeps_serving_after_a_chat_ended_until_clawbot_stops(make_kernel) -> None:
    """A chat that ends (a channel whose start returns) leaves the API serving: a service
    keeps its API; quitting is the terminal's word (Ctrl-D, end of piped input) or a stop."""
    kernel = await make_kernel()
    gateway = kernel.gateway(lambda m, k: None)
    chat = FakeChannel()
    api = ApiChannel(ApiSettings("127.0.0.1", 0, kernel.state_dir, "t" * 43))
    run = asyncio.create_task(gateway.run([chat, api]))
    await asyncio.wait_for(api.listening.wait(), 10)
    await chat.stop()  # its start() returns: that chat has ended
    await asyncio.sleep(0.3)
    assert not run.done() and api.listening.is_set()
    gateway.stop()
    await asyncio.wait_for(run, 10)
    assert not api.listening.is_set()
