"""The control API answers only the token holder, and the token never shows anywhere else.

A real server on 127.0.0.1 (a free port) in front of a real Gateway; requests by aiohttp's
client. The token lives in <state>/gateway/token (0600, directory 0700); where the API
listens is in endpoint.json exactly while it listens.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import stat
import subprocess
import sys
from pathlib import Path

import aiohttp
import pytest
from clawbot.control.endpoint import endpoint_path, live_endpoint
from clawbot.control.token import ensure_token, token_path
from clawbot_control.api_channel import ApiChannel
from clawbot_control.server import serve
from clawbot_control.settings import ApiSettings, ControlApiError, bind_set_in_file, check_bind

from .apihelpers import auth, serving, url

ENDPOINTS = [
    ("GET", "/v1/health", None),
    ("GET", "/v1/sessions", None),
    ("POST", "/v1/turns", {"text": "hi"}),
    ("GET", "/v1/approvals", None),
    ("POST", "/v1/approvals/abc123", {"choice": "deny"}),
]


@pytest.mark.parametrize(("method", "path", "body"), ENDPOINTS)
async def test_every_endpoint_refuses_a_missing_or_wrong_token_and_answers_the_right_one(make_kernel, method, path, body) -> None:
    kernel = await make_kernel()
    async with serving(kernel) as api, aiohttp.ClientSession() as http:
        for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": api.settings.token}, {"Authorization": f"Basic {api.settings.token}"}):
            async with http.request(method, url(api, path), json=body, headers=headers) as response:
                assert response.status == 401, (headers, await response.text())
                assert api.settings.token not in await response.text()
        async with http.request(method, url(api, path), json=body, params={"token": api.settings.token}) as response:
            assert response.status == 401  # never taken from a URL: URLs end up in logs and histories
        async with http.request(method, url(api, path), json=body, headers=auth(api)) as response:
            assert response.status in (200, 404), await response.text()  # 404: no such approval waits


async def test_the_token_and_the_endpoint_file_are_private_and_the_file_lives_while_listening(make_kernel) -> None:
    kernel = await make_kernel()
    root = kernel.state_dir
    async with serving(kernel) as api:
        endpoint = json.loads(endpoint_path(root).read_text())
        assert (endpoint["host"], endpoint["port"], endpoint["pid"]) == (*api.address, os.getpid())
        assert stat.S_IMODE(endpoint_path(root).stat().st_mode) == 0o600
        assert stat.S_IMODE(token_path(root).stat().st_mode) == 0o600
        assert stat.S_IMODE(token_path(root).parent.stat().st_mode) == 0o700
        assert len(api.settings.token) >= 40
        assert live_endpoint(root) is not None
    assert not endpoint_path(root).exists()


class _Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


async def test_the_token_is_absent_from_logs_urls_and_answers(make_kernel) -> None:
    kernel = await make_kernel()
    # a handler of its own on clawbot's root logger: whatever another test left configured
    # (a CLI run turns propagation off), every record of the API reaches it
    seen = _Records()
    root = logging.getLogger("clawbot")
    level = root.level
    root.setLevel(logging.DEBUG)
    root.addHandler(seen)
    try:
        token = await _talk_to_the_api(kernel)
    finally:
        root.removeHandler(seen)
        root.setLevel(level)
    text = "\n".join(record.getMessage() for record in seen.records)
    access = [r for r in seen.records if r.name == "clawbot.control.access"]
    assert len(access) >= 3, "the access log records requests (method, path, status)"
    assert token not in text
    assert "Authorization" not in text and "Bearer" not in text


async def _talk_to_the_api(kernel) -> str:  # noqa: ANN001
    """Health, a turn, a refused request and a socket: what the logs then hold is checked."""
    async with serving(kernel) as api, aiohttp.ClientSession() as http:
        token = api.settings.token
        async with http.get(url(api, "/v1/health"), headers=auth(api)) as response:
            assert response.status == 200
            assert token not in await response.text()
        async with http.post(url(api, "/v1/turns"), json={"text": "hi"}, headers=auth(api)) as response:
            events = [json.loads(line) for line in (await response.text()).splitlines()]
        assert [e["type"] for e in events][-2:] == ["reply", "done"]
        async with http.get(url(api, "/v1/health"), headers={"Authorization": "Bearer not-it"}) as response:
            assert response.status == 401
        async with http.ws_connect(url(api, "/v1/ws")) as socket:
            await socket.send_json({"type": "auth", "token": token})
            assert (await socket.receive_json(timeout=30))["type"] == "ready"
    return token


@pytest.mark.parametrize(
    ("host", "explicit", "allowed"),
    [
        ("127.0.0.1", False, True),
        ("127.0.0.2", False, True),
        ("::1", False, True),
        ("localhost", False, True),
        ("0.0.0.0", False, False),
        ("192.168.1.20", False, False),
        ("::", False, False),
        ("0.0.0.0", True, True),
    ],
)
def test_binding_beyond_loopback_needs_gateway_bind_in_the_file(host: str, explicit: bool, allowed: bool) -> None:
    if allowed:
        check_bind(host, explicit)
        return
    with pytest.raises(ControlApiError, match=r"gateway\.bind"):
        check_bind(host, explicit)


def test_only_a_bind_written_in_the_file_counts_as_asked_for(tmp_path: Path) -> None:
    written = tmp_path / "with.toml"
    written.write_text('[gateway]\nbind = "0.0.0.0"\n')
    other = tmp_path / "without.toml"
    other.write_text("[gateway]\nport = 0\n")
    assert bind_set_in_file(str(written)) and not bind_set_in_file(str(other)) and not bind_set_in_file(None)


async def test_the_server_itself_refuses_a_wildcard_bind_not_asked_for(make_kernel) -> None:
    kernel = await make_kernel()
    api = ApiChannel(ApiSettings("0.0.0.0", 0, kernel.state_dir, "t" * 43))
    with pytest.raises(ControlApiError, match=r"gateway\.bind = '0\.0\.0\.0'"):
        await asyncio.wait_for(serve(api, asyncio.Event()), 5)
    assert not endpoint_path(kernel.state_dir).exists()


def test_an_endpoint_file_of_a_dead_gateway_is_ignored(tmp_path: Path) -> None:
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True, check=True)
    endpoint_path(tmp_path).parent.mkdir(parents=True)
    endpoint_path(tmp_path).write_text(json.dumps({"pid": int(dead.stdout), "host": "127.0.0.1", "port": 1, "started_at": 0}))
    assert live_endpoint(tmp_path) is None
    endpoint_path(tmp_path).write_text("not json")
    assert live_endpoint(tmp_path) is None
    endpoint_path(tmp_path).write_text(json.dumps({"pid": os.getpid(), "host": "127.0.0.1", "port": 1, "started_at": 0}))
    assert live_endpoint(tmp_path) is not None


def test_a_token_file_left_empty_by_a_crash_is_replaced_and_every_caller_gets_the_one_on_disk(tmp_path: Path) -> None:
    path = token_path(tmp_path)
    path.parent.mkdir(parents=True)
    path.write_text("", encoding="utf-8")  # a crash between creating the file and writing it
    first, second = ensure_token(tmp_path), ensure_token(tmp_path)
    assert first == second == path.read_text(encoding="utf-8").strip()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


@pytest.mark.parametrize(
    ("host", "served"),
    [("127.0.0.1:{port}", True), ("localhost:{port}", True), ("[::1]:{port}", True), ("evil.example:{port}", False), ("evil.example", False)],
)
async def test_on_loopback_only_requests_naming_a_loopback_host_are_served(make_kernel, host: str, served: bool) -> None:
    """A page of another site whose name points at 127.0.0.1 (DNS rebinding) gets nothing."""
    async with serving(await make_kernel()) as api, aiohttp.ClientSession() as http:
        headers = {**auth(api), "Host": host.format(port=api.address[1])}
        async with http.get(url(api, "/v1/health"), headers=headers) as response:
            assert (response.status == 200) is served, response.status


def test_the_api_channel_beyond_loopback_not_asked_for_does_not_run_and_says_why(tmp_path: Path) -> None:
    refused = ApiChannel(ApiSettings("0.0.0.0", 0, tmp_path, "t" * 43)).available()
    assert refused is not None and "gateway.bind = '0.0.0.0'" in refused
    assert ApiChannel(ApiSettings("0.0.0.0", 0, tmp_path, "t" * 43, explicit_bind=True)).available() is None
    assert ApiChannel(ApiSettings("127.0.0.1", 0, tmp_path, "t" * 43)).available() is None
