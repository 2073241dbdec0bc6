"""web_search against a fake Brave Search API (and a fake SearXNG) served on 127.0.0.1.

Each test checks what the model gets back *and* what the fake received: query parameters
and the ``X-Subscription-Token`` header. The API key is a sentinel that must never show up
in a result, its details, a log line or a repr.
"""

from __future__ import annotations

import json
import logging
import socket
import threading
import time
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import clawbot_tools.plugin as tools_plugin
import pytest
from clawbot import ToolCall
from clawbot.testing import ConfigError
from clawbot_tools.config import ToolsSettings
from clawbot_tools.web import tools
from clawbot_tools.web.search import WebSearcher, search_tool
from clawbot_tools.web.search_brave import BraveSearch

from .fence_checks import sealed

KEY = "BSA-SENTINEL-key-do-not-show-7c1d"

BRAVE_OK = {
    "type": "search",
    "query": {"original": "clawbot gatway", "altered": "clawbot gateway"},
    "web": {
        "type": "search",
        "results": [
            {
                "title": "Clawbot &amp; the <strong>gateway</strong>",
                "url": "https://example.com/clawbot",
                "description": "A <strong>personal</strong>   agent\ngateway &mdash; plugins first.",
                "age": "2 days ago",
                "profile": {"name": "Example"},
            },
            {"title": "Evil", "url": "javascript:alert(1)", "description": "dropped"},
            {
                "title": "Second result",
                "url": "http://docs.example.org/page?a=1",
                "description": "Docs.",
            },
            {"title": "Third", "url": "https://third.example/", "description": "x" * 1000},
        ],
    },
}


def _json_response(status: int, data, headers: dict | None = None) -> tuple[int, dict, bytes]:
    return status, {"Content-Type": "application/json", **(headers or {})}, json.dumps(data).encode()


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):  # keep test output quiet
        pass

    def do_GET(self):
        server: FakeSearchAPI = self.server  # type: ignore[assignment]
        parts = urlsplit(self.path)
        params = {k: v[0] if len(v) == 1 else v for k, v in parse_qs(parts.query).items()}
        server.requests.append({"path": parts.path, "params": params, "headers": {k.lower(): v for k, v in self.headers.items()}})
        status, headers, body = server.responses.popleft() if server.responses else _json_response(200, BRAVE_OK)
        if server.delay:
            time.sleep(server.delay)
        self.send_response(status)
        for key, value in headers.items():
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        try:
            self.wfile.write(body)
        except OSError:
            pass


class FakeSearchAPI(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.requests: list[dict] = []
        self.responses: deque[tuple[int, dict, bytes]] = deque()
        self.delay = 0.0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def respond(self, status: int, data=None, *, headers: dict | None = None, raw: bytes | None = None) -> None:
        if raw is not None:
            self.responses.append((status, headers or {}, raw))
        else:
            self.responses.append(_json_response(status, data, headers))


@pytest.fixture(scope="module")
def _server():
    srv = FakeSearchAPI()
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield srv
    srv.shutdown()
    srv.server_close()


@pytest.fixture
def api(_server) -> FakeSearchAPI:
    _server.requests.clear()
    _server.responses.clear()
    _server.delay = 0.0
    return _server


def brave(api: FakeSearchAPI, **settings) -> WebSearcher:
    """A searcher on the fake; the key comes from the (fake) environment unless given."""
    return WebSearcher(ToolsSettings(web_search_base_url=f"{api.url}/res/v1/web/search", **settings), env={"BRAVE_API_KEY": KEY})


def text_of(result) -> str:
    return result.content[0].text


def _call(**arguments) -> ToolCall:
    return ToolCall("c1", "web_search", arguments, "main", "agent:main:main", Path("."))


# ------------------------------------------------------------------------- Brave: success


async def test_brave_results_are_a_numbered_untrusted_list_and_the_request_is_right(api):
    result = await brave(api).search("clawbot gatway", 3, country="de", search_lang="EN", freshness="pw")
    assert not result.is_error, text_of(result)

    (request,) = api.requests
    assert request["path"] == "/res/v1/web/search"
    assert request["params"] == {
        "q": "clawbot gatway",
        "count": "3",
        "country": "DE",
        "search_lang": "en",
        "freshness": "pw",
    }
    assert request["headers"]["x-subscription-token"] == KEY
    assert request["headers"]["accept"] == "application/json"

    text = text_of(result)
    block = sealed(text)
    assert block.label == "Brave Search results for: clawbot gatway"
    assert block.before == [] and block.after == []
    assert "(showing results for: clawbot gateway)" in text
    assert "1. Clawbot & the gateway" in text
    assert "   https://example.com/clawbot · 2 days ago" in text
    assert "   A personal agent gateway — plugins first." in text
    assert "2. Second result" in text and "   http://docs.example.org/page?a=1" in text
    assert "3. Third" in text and "x" * 390 in text and "x" * 401 not in text  # snippet bounded
    assert "javascript:" not in text and "Evil" not in text  # non-web URLs are dropped
    assert "<strong>" not in text

    d = result.details
    assert d["provider"] == "brave" and d["query"] == "clawbot gatway" and d["status"] == 200
    assert d["count"] == 3 and d["altered_query"] == "clawbot gateway"
    assert d["results"][0] == {
        "title": "Clawbot & the gateway",
        "url": "https://example.com/clawbot",
        "snippet": "A personal agent gateway — plugins first.",
        "age": "2 days ago",
    }
    assert [r["url"] for r in d["results"]] == [
        "https://example.com/clawbot",
        "http://docs.example.org/page?a=1",
        "https://third.example/",
    ]


async def test_count_defaults_to_the_setting_and_the_list_is_cut_to_it(api):
    result = await brave(api, web_search_count=2).search("clawbot")
    assert api.requests[0]["params"]["count"] == "2"
    assert len(result.details["results"]) == 2 and "3. " not in text_of(result)


async def test_no_results_is_not_an_error(api):
    api.respond(200, {"type": "search", "query": {"original": "zzqx"}})
    result = await brave(api).search("zzqx")
    assert not result.is_error and "No results." in text_of(result)
    assert result.details["results"] == []


async def test_the_configured_key_wins_over_the_environment(api):
    searcher = WebSearcher(
        ToolsSettings(web_search_base_url=api.url, web_search_api_key="configured-key"),
        env={"BRAVE_API_KEY": "env-key"},
    )
    await searcher.search("q")
    assert api.requests[0]["headers"]["x-subscription-token"] == "configured-key"


# ------------------------------------------------------------------------- Brave: errors


async def test_not_configured_names_the_env_var_and_the_setting_and_sends_nothing(api):
    searcher = WebSearcher(ToolsSettings(web_search_base_url=api.url), env={})
    result = await searcher.search("clawbot")
    text = text_of(result)
    assert result.is_error and text.startswith("web_search is not configured")
    assert "BRAVE_API_KEY" in text and "web_search_api_key" in text and "[plugins.tools]" in text
    assert result.details["configured"] is False and result.details["provider"] == "brave"
    assert api.requests == []


@pytest.mark.parametrize(
    ("status", "body"),
    [
        (401, {"type": "ErrorResponse", "error": {"code": "UNAUTHORIZED", "detail": "no"}}),
        (403, None),
        (
            422,
            {"type": "ErrorResponse", "error": {"status": 422, "code": "SUBSCRIPTION_TOKEN_INVALID", "detail": "The provided subscription token is invalid."}},
        ),
    ],
)
async def test_a_rejected_key_says_which_key_to_fix(api, status, body):
    if body is None:
        api.respond(status, raw=b"Forbidden", headers={"Content-Type": "text/plain"})
    else:
        api.respond(status, body)
    result = await brave(api).search("q")
    text = text_of(result)
    assert result.is_error and text.startswith("web_search: Brave Search rejected the API key")
    assert f"HTTP {status}" in text and "BRAVE_API_KEY" in text
    assert result.details["status"] == status


async def test_rate_limit_with_retry_after(api):
    api.respond(429, {"type": "ErrorResponse", "error": {"code": "RATE_LIMITED", "detail": "Request rate limit exceeded."}}, headers={"Retry-After": "7"})
    result = await brave(api).search("q")
    text = text_of(result)
    assert result.is_error and "rate limit reached (HTTP 429)" in text and "Retry after 7 s" in text
    assert result.details["rate_limited"] is True and result.details["retry_after_s"] == 7


@pytest.mark.parametrize(
    ("retry_after", "expected"),
    [("Wed, 21 Oct 2015 07:28:00 GMT", "Retry after 0 s"), ("-5", "Wait a little"), ("in a bit", "Wait a little"), ("9" * 40, "Retry after 24 h")],
    ids=["past-date", "negative", "garbage", "huge"],
)
async def test_rate_limit_reads_retry_after_like_the_providers(api, retry_after: str, expected: str):
    api.respond(429, {}, headers={"Retry-After": retry_after})
    assert expected in text_of(await brave(api).search("q"))


async def test_rate_limit_from_brave_quota_headers(api):
    # The per-second window has room; the monthly quota is used up and resets in ~16 days.
    api.respond(429, {}, headers={"X-RateLimit-Remaining": "1, 0", "X-RateLimit-Reset": "1, 1419704"})
    result = await brave(api).search("q")
    assert "Retry after 16 days" in text_of(result)
    assert result.details["retry_after_s"] == 1419704
    api.respond(429, {})
    plain = await brave(api).search("q")
    assert "Wait a little" in text_of(plain) and plain.details["retry_after_s"] is None


@pytest.mark.parametrize("status", [500, 502, 503])
async def test_server_errors(api, status):
    api.respond(status, raw=b"<html>bad gateway</html>", headers={"Content-Type": "text/html"})
    result = await brave(api).search("q")
    assert result.is_error and f"server error (HTTP {status})" in text_of(result)
    assert "Try again later" in text_of(result)


async def test_a_validation_error_shows_brave_s_detail(api):
    api.respond(
        422,
        {
            "type": "ErrorResponse",
            "error": {
                "code": "VALIDATION",
                "detail": "Unable to validate request parameter(s)",
                "meta": {"errors": [{"loc": ["query", "country"], "msg": "value is not a valid enumeration member"}]},
            },
        },
    )
    text = text_of(await brave(api).search("q", country="XX"))
    assert "refused the request (HTTP 422, VALIDATION): Unable to validate request parameter(s)" in text
    assert "query.country: value is not a valid enumeration member" in text


async def test_timeout(api):
    api.delay = 10
    result = await brave(api, web_search_timeout_s=0.3).search("slow")
    assert result.is_error and "did not answer within 0.3 s" in text_of(result)
    assert "web_search_timeout_s" in text_of(result) and result.details["timeout"] is True


@pytest.mark.parametrize(
    ("raw", "ctype", "expected"),
    [
        (b"<html>a login page</html>", "text/html", "body that is not JSON (text/html, 25 bytes)"),
        (b'{"web": {"results": "nope"}}', "application/json", "unexpected shape (web.results is not a list)"),
        (b"[1, 2]", "application/json", "unexpected shape (not an object)"),
        (b'{"web": ', "application/json", "not JSON"),
    ],
)
async def test_malformed_answers(api, raw, ctype, expected):
    api.respond(200, raw=raw, headers={"Content-Type": ctype})
    result = await brave(api).search("q")
    assert result.is_error and expected in text_of(result), text_of(result)


async def test_unreachable_endpoint():
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    searcher = WebSearcher(ToolsSettings(web_search_base_url=f"http://user:pw-secret@127.0.0.1:{port}/x"), env={"BRAVE_API_KEY": KEY})
    result = await searcher.search("q")
    text = text_of(result)
    assert result.is_error and f"could not reach Brave Search at http://127.0.0.1:{port}/x" in text
    assert "pw-secret" not in text


# ------------------------------------------------------------------------- the key stays secret


async def test_the_api_key_never_leaves(api, caplog):
    caplog.set_level(logging.DEBUG)
    searcher = brave(api)
    results = [await searcher.search("ok")]
    # Servers that echo the key back (in an error detail, even in a result) are scrubbed too.
    api.respond(422, {"type": "ErrorResponse", "error": {"code": "X", "detail": f"bad token {KEY}"}})
    api.respond(200, {"web": {"results": [{"title": KEY, "url": "https://a.example/", "description": f"k={KEY}"}]}})
    api.respond(401, {})
    api.respond(429, {}, headers={"Retry-After": "3"})
    api.respond(500, {})
    api.respond(200, raw=b"not json", headers={"Content-Type": "text/plain"})
    for _ in range(6):
        results.append(await searcher.search("again"))
    api.delay = 10.0
    results.append(await brave(api, web_search_timeout_s=3.0).search("slow"))  # time to connect on a busy machine
    api.delay = 0.0
    assert len(api.requests) == 8 and all(r["headers"]["x-subscription-token"] == KEY for r in api.requests)
    assert "[redacted]" in text_of(results[1]) and "[redacted]" in text_of(results[2])
    for result in results:
        assert KEY not in text_of(result)
        assert KEY not in json.dumps(dict(result.details), default=str)
        assert KEY not in repr(result)
    assert KEY not in caplog.text
    settings = ToolsSettings(web_search_api_key=KEY)
    tool = search_tool(settings)
    for thing in (settings, tool, BraveSearch(KEY), WebSearcher(settings).provider()):
        assert KEY not in repr(thing), type(thing).__name__


# ------------------------------------------------------------------------- SearXNG


def searxng(api: FakeSearchAPI, base: str | None = None, **settings) -> WebSearcher:
    return WebSearcher(ToolsSettings(web_search_provider="searxng", web_search_base_url=base or api.url, **settings), env={})


SEARXNG_OK = {
    "query": "clawbot",
    "number_of_results": 0,
    "results": [
        {
            "url": f"https://r{i}.example/",
            "title": f"Result {i}",
            "content": f"Snippet <b>{i}</b>",
            "engine": "duckduckgo",
            **({"publishedDate": "2025-01-02T00:00:00"} if i == 0 else {}),
        }
        for i in range(8)
    ],
    "answers": [],
    "suggestions": [],
}


async def test_searxng_request_and_results(api):
    api.respond(200, SEARXNG_OK)
    result = await searxng(api, web_search_count=5).search("clawbot", 3, country="de", search_lang="en", freshness="pm")
    assert not result.is_error, text_of(result)
    (request,) = api.requests
    assert request["path"] == "/search"
    assert request["params"] == {"q": "clawbot", "format": "json", "language": "en-DE", "time_range": "month"}
    assert "x-subscription-token" not in request["headers"]
    text = text_of(result)
    assert sealed(text).label == "SearXNG results for: clawbot"
    assert "1. Result 0" in text and "   https://r0.example/ · 2025-01-02T00:00:00" in text and "   Snippet 0" in text
    assert "3. Result 2" in text and "4. " not in text
    assert result.details["provider"] == "searxng" and len(result.details["results"]) == 3


async def test_searxng_base_url_may_already_name_the_search_path(api):
    api.respond(200, SEARXNG_OK)
    await searxng(api, base=f"{api.url}/search/").search("x")
    assert api.requests[0]["path"] == "/search"


async def test_searxng_errors(api):
    missing = await WebSearcher(ToolsSettings(web_search_provider="searxng"), env={}).search("q")
    assert missing.is_error and text_of(missing).startswith("web_search is not configured")
    assert "web_search_base_url" in text_of(missing)

    date_range = await searxng(api).search("q", freshness="2024-01-01to2024-02-01")
    assert date_range.is_error and "pd, pw, pm or py only" in text_of(date_range)
    assert api.requests == []

    api.respond(403, raw=b"Forbidden", headers={"Content-Type": "text/plain"})
    forbidden = await searxng(api).search("q")
    assert forbidden.is_error and "HTTP 403" in text_of(forbidden) and "search.formats" in text_of(forbidden)


# ------------------------------------------------------------------------- the tool surface


async def test_tool_handler_validates_arguments(api):
    settings = ToolsSettings(web_search_provider="searxng", web_search_base_url=api.url)
    tool = {t.name: t for t in tools(settings)}["web_search"]
    assert tool.group == "web" and tool.parameters["required"] == ["query"]
    for bad, needle in (
        ({}, "non-empty 'query'"),
        ({"query": "  "}, "non-empty 'query'"),
        ({"query": "q" * 401}, "longer than 400"),
        ({"query": "q", "count": 11}, "'count' must be an integer from 1 to 10"),
        ({"query": "q", "count": True}, "'count'"),
        ({"query": "q", "country": "Germany"}, "invalid 'country'"),
        ({"query": "q", "freshness": "yesterday"}, "invalid 'freshness'"),
    ):
        result = await tool.handler(_call(**bad))
        assert result.is_error and needle in text_of(result), (bad, text_of(result))
    assert api.requests == []


async def test_tool_through_the_kernel_with_config(make_kernel, api, monkeypatch):
    """The key comes from the kernel's environment (process env + stored credentials)."""
    monkeypatch.delenv("BRAVE_API_KEY", raising=False)
    config = f'[plugins.tools]\nweb_search_base_url = "{api.url}/res/v1/web/search"\nweb_search_count = 4\n'
    kernel = await make_kernel(plugins={"tools": tools_plugin}, config=config, env={"BRAVE_API_KEY": KEY})
    tool = kernel.tools["web_search"]
    result = await tool.handler(_call(query="clawbot", search_lang="en"))
    assert not result.is_error, text_of(result)
    assert api.requests[0]["params"] == {"q": "clawbot", "count": "4", "search_lang": "en"}
    assert api.requests[0]["headers"]["x-subscription-token"] == KEY


@pytest.mark.parametrize(
    ("table", "path", "message"),
    [
        ('web_search_provider = "google"', "plugins.tools.web_search_provider", ""),
        ("web_search_count = 11", "plugins.tools.web_search_count", "must be between 1 and 10, got 11"),
        ("web_search_timeout_s = 0.0", "plugins.tools.web_search_timeout_s", "must be between 0.01 and 600, got 0"),
        ('web_search_base_url = "api.search.brave.com"', "plugins.tools", "web_search_base_url must be an http"),
    ],
)
async def test_invalid_search_settings_name_the_key(make_kernel, table, path, message):
    with pytest.raises(ConfigError) as caught:
        await make_kernel(plugins={"tools": tools_plugin}, config=f"[plugins.tools]\n{table}\n")
    assert [(p.path, message in p.message) for p in caught.value.problems] == [(path, True)], caught.value.problems
