"""``web_fetch``: one URL to readable text, behind the SSRF policy of :mod:`.ssrf`.

Every hop (the first URL and each redirect, followed by hand) is checked statically,
then its host is resolved and every address vetted. The connection is *pinned*: the
transport's network backend only dials addresses vetted for exactly that host and port,
so a DNS answer that changes between the check and the connect (rebinding) cannot
redirect it; the Host header and TLS SNI still carry the original name.
"""

from __future__ import annotations

import asyncio
import functools
import ssl
from collections.abc import Callable, Iterable
from typing import Any

import httpcore2
import httpx2
from clawbot import ToolCall, ToolResult
from clawbot.safetext import fence, visible

from clawbot_tools.config import ToolsSettings
from clawbot_tools.web.extract import html_to_text, json_to_text
from clawbot_tools.web.ssrf import (
    BlockedURL,
    Resolver,
    check_url,
    system_resolve,
    vet_host,
)

DEFAULT_MAX_CHARS = 20_000
MAX_CHARS_CAP = 100_000
MIN_CHARS = 100
MAX_BYTES = 2_000_000
MAX_REDIRECTS = 5
CONNECT_TIMEOUT_S = 5.0
TOTAL_TIMEOUT_S = 20.0
REDIRECT_CODES = frozenset({301, 302, 303, 307, 308})
USER_AGENT = "Mozilla/5.0 (compatible; clawbot-web-fetch/0.1)"

# (vetted address, port) -> (address actually dialled, port); a seam for tests only.
Route = Callable[[str, int], tuple[str, int]]


class _PinnedBackend(httpcore2.AsyncNetworkBackend):
    """Dials only addresses vetted for the exact (host, port) httpcore asks for."""

    def __init__(self, pins: dict[tuple[str, int], str], route: Route | None) -> None:
        self._pins = pins
        self._route = route
        self._inner = httpcore2.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore2.AsyncNetworkStream:
        address = self._pins.get((host, port))
        if address is None:
            raise httpcore2.ConnectError(f"refusing to dial {host}:{port}: not vetted by the address policy")
        if self._route is not None:
            address, port = self._route(address, port)
        return await self._inner.connect_tcp(
            address,
            port,
            timeout=timeout,
            local_address=local_address,
            socket_options=socket_options,
        )

    async def connect_unix_socket(self, *args: Any, **kwargs: Any) -> httpcore2.AsyncNetworkStream:
        raise httpcore2.ConnectError("unix sockets are not allowed")

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


@functools.cache
def _ssl_context() -> ssl.SSLContext:
    return httpx2.create_ssl_context(trust_env=False)


class _PinnedTransport(httpx2.AsyncHTTPTransport):
    """The stock transport with its pool rebuilt around the pinning network backend."""

    def __init__(self, backend: _PinnedBackend) -> None:
        # AsyncHTTPTransport.__init__ would only build a pool (and an SSL context) we replace.
        self._pool = httpcore2.AsyncConnectionPool(
            ssl_context=_ssl_context(),
            max_connections=4,
            max_keepalive_connections=0,
            http1=True,
            http2=False,
            network_backend=backend,
        )


class FetchFailed(Exception):
    """A fetch that got no usable answer (not a policy refusal)."""


def _kind(content_type: str, head: bytes) -> str | None:
    """``html`` / ``json`` / ``text``, or ``None`` for content we refuse (binary)."""
    ctype = content_type.split(";", 1)[0].strip().lower()
    if ctype in ("text/html", "application/xhtml+xml"):
        return "html"
    if ctype == "application/json" or ctype.endswith("+json"):
        return "json"
    if ctype.startswith("text/") or ctype in ("application/xml", "application/javascript") or ctype.endswith("+xml"):
        return "text"
    if ctype and ctype not in ("application/octet-stream", "binary/octet-stream"):
        return None
    # No useful type: sniff the first bytes.
    if b"\x00" in head[:1024]:
        return None
    try:
        sample = head[:1024].decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.start < len(head[:1024]) - 4:  # not just a character cut at the sample's end
            return None
        sample = head[: exc.start].decode("utf-8")
    lowered = sample.lstrip().lower()
    if lowered.startswith(("<!doctype html", "<html")):
        return "html"
    if lowered.startswith(("{", "[")):
        return "json"
    return "text"


def _decode(body: bytes, charset: str | None) -> str:
    try:
        return body.decode(charset or "utf-8", errors="replace")
    except LookupError:
        return body.decode("utf-8", errors="replace")


def server_text(value: Any, limit: int = 300) -> str:
    """A server's words (a header, an exception naming its bytes) for a message outside any
    fence: control characters shown, one line, bounded."""
    text = visible(" ".join(str(value).split()))
    return text if len(text) <= limit else text[: limit - 1] + "…"


class WebFetcher:
    """Fetches URLs under the address policy; every knob is a constructor argument.

    ``resolve`` (host, port -> addresses) and ``route`` (vetted address -> dialled address)
    are explicit seams so tests can exercise the policy against a local server.
    """

    def __init__(
        self,
        settings: ToolsSettings | None = None,
        *,
        resolve: Resolver = system_resolve,
        route: Route | None = None,
        connect_timeout: float = CONNECT_TIMEOUT_S,
        total_timeout: float = TOTAL_TIMEOUT_S,
        max_bytes: int = MAX_BYTES,
        max_redirects: int = MAX_REDIRECTS,
    ) -> None:
        self.allow_private = (settings or ToolsSettings()).web_allow_private_networks
        self.resolve = resolve
        self.route = route
        self.connect_timeout = connect_timeout
        self.total_timeout = total_timeout
        self.max_bytes = max_bytes
        self.max_redirects = max_redirects

    async def fetch(self, url: str, max_chars: int = DEFAULT_MAX_CHARS) -> ToolResult:
        max_chars = max(MIN_CHARS, min(int(max_chars), MAX_CHARS_CAP))
        try:
            async with asyncio.timeout(self.total_timeout):
                return await self._fetch(url, max_chars)
        except BlockedURL as exc:
            return ToolResult.error(f"web_fetch refused {url}: {exc}", url=url, blocked=True)
        except TimeoutError:
            return ToolResult.error(
                f"web_fetch timed out after {self.total_timeout:g}s fetching {url}",
                url=url,
            )
        except httpx2.TimeoutException as exc:
            return ToolResult.error(f"web_fetch timed out fetching {url}: {type(exc).__name__}", url=url)
        except httpx2.InvalidURL as exc:
            return ToolResult.error(f"web_fetch: invalid URL {url!r}: {server_text(exc)}", url=url)
        except (FetchFailed, httpx2.HTTPError, OSError) as exc:
            return ToolResult.error(f"web_fetch failed for {url}: {server_text(exc) or type(exc).__name__}", url=url)

    async def _fetch(self, url: str, max_chars: int) -> ToolResult:
        current = httpx2.URL(url.strip())
        pins: dict[tuple[str, int], str] = {}
        timeout = httpx2.Timeout(self.total_timeout, connect=self.connect_timeout)
        headers = {
            "User-Agent": USER_AGENT,
            "Accept": "text/html,application/xhtml+xml,application/json,text/plain;q=0.9,*/*;q=0.5",
        }
        transport = _PinnedTransport(_PinnedBackend(pins, self.route))
        async with httpx2.AsyncClient(
            transport=transport,
            timeout=timeout,
            follow_redirects=False,
            trust_env=False,
            headers=headers,
        ) as client:
            redirects: list[str] = []
            while True:
                await self._vet(current, pins)
                async with client.stream("GET", current) as response:
                    location = response.headers.get("location")
                    if response.status_code in REDIRECT_CODES and location:
                        if len(redirects) >= self.max_redirects:
                            raise FetchFailed(f"too many redirects (more than {self.max_redirects})")
                        redirects.append(str(current))
                        current = current.join(location)
                        continue
                    return await self._read(response, current, redirects, max_chars)

    async def _vet(self, url: httpx2.URL, pins: dict[tuple[str, int], str]) -> None:
        check_url(url, allow_private=self.allow_private)
        host = url.raw_host.decode("ascii")
        port = url.port or (443 if url.scheme == "https" else 80)
        pins[(host, port)] = await vet_host(host, port, allow_private=self.allow_private, resolve=self.resolve)

    async def _read(
        self,
        response: httpx2.Response,
        url: httpx2.URL,
        redirects: list[str],
        max_chars: int,
    ) -> ToolResult:
        content_type = response.headers.get("content-type", "")
        body = bytearray()
        cut = False
        kind: str | None = "pending"
        async for chunk in response.aiter_bytes():
            room = self.max_bytes - len(body)
            body += chunk[:room]
            if kind == "pending":
                kind = _kind(content_type, bytes(body))
                if kind is None:
                    break
            if len(chunk) > room:
                cut = True
                break
        if kind == "pending":
            kind = _kind(content_type, bytes(body))
        details: dict[str, Any] = {
            "url": str(redirects[0]) if redirects else str(url),
            "final_url": str(url),
            "status": response.status_code,
            "content_type": content_type,
            "bytes": len(body),
            "redirects": list(redirects),
        }
        if kind is None:
            shown = server_text(content_type, 100) if content_type else "unknown type"
            return ToolResult.error(
                f"web_fetch: {server_text(url)} returned binary content ({shown}); only HTML, JSON and text can be read",
                truncated=False,
                **details,
            )
        raw = _decode(bytes(body), response.charset_encoding)
        title = ""
        if kind == "html":
            title, text = html_to_text(raw, str(url))
        elif kind == "json":
            text = json_to_text(raw)
        else:
            text = raw.strip()
        notes: list[str] = []
        truncated = cut
        if len(text) > max_chars:
            notes.append(f"[truncated: showing {max_chars:,} of {len(text):,} characters; raise max_chars to see more]")
            text = text[:max_chars]
            truncated = True
        if cut:
            notes.append(f"[body cut off after {self.max_bytes:,} bytes; the rest was not downloaded]")
        # Everything the page controls (title, text) is inside the fence, its URL in the
        # label; clawbot's own notes follow the END line, where the page cannot forge them.
        page = f"Title: {title}\n\n{text}" if title else text
        result_text = fence(page, label=f"web page {url} (HTTP {response.status_code})")
        if notes:
            result_text += "\n" + "\n".join(notes)
        details.update(truncated=truncated, title=title)
        if response.status_code >= 400:
            return ToolResult.error(f"HTTP {response.status_code}: the server answered with an error page.\n{result_text}", **details)
        return ToolResult.text(result_text, **details)


WEB_FETCH_PARAMETERS = {
    "type": "object",
    "properties": {
        "url": {"type": "string", "description": "The http(s) URL to fetch."},
        "max_chars": {
            "type": "integer",
            "description": f"Most characters of extracted text to return (default {DEFAULT_MAX_CHARS}, at most {MAX_CHARS_CAP}).",
            "minimum": MIN_CHARS,
            "maximum": MAX_CHARS_CAP,
        },
    },
    "required": ["url"],
    "additionalProperties": False,
}


def make_handler(fetcher: WebFetcher) -> Callable[[ToolCall], Any]:
    async def web_fetch(call: ToolCall) -> ToolResult:
        url = call.arguments.get("url")
        if not isinstance(url, str) or not url.strip():
            return ToolResult.error("web_fetch needs a 'url' string argument")
        max_chars = call.arguments.get("max_chars", DEFAULT_MAX_CHARS)
        if isinstance(max_chars, bool) or not isinstance(max_chars, (int, float)):
            return ToolResult.error("web_fetch: 'max_chars' must be an integer")
        return await fetcher.fetch(url, int(max_chars))

    return web_fetch
