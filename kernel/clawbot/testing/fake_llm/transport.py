"""An in-process httpx2 transport that streams ASGI responses as they are produced.

``httpx2.ASGITransport`` buffers the whole response before returning it, so a stream the
app drops half way surfaces as an exception before any event reaches the SDK. This
transport hands body chunks to the client as the app sends them and turns an app that dies
mid-response into ``httpx2.RemoteProtocolError`` after the events already sent, which is
what a real dropped connection looks like over loopback. It also honours the client's read
timeout (``httpx2.ReadTimeout``), so a ``slow`` fault can trip SDK timeouts in process.
Requires asyncio.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, MutableMapping
from typing import Any

import httpx2

_END = object()


class _BodyStream(httpx2.AsyncByteStream):
    def __init__(self, queue: asyncio.Queue[Any], task: asyncio.Task[None], disconnected: asyncio.Event, timeout: float | None) -> None:
        self._queue = queue
        self._task = task
        self._disconnected = disconnected
        self._timeout = timeout

    async def __aiter__(self) -> AsyncIterator[bytes]:
        while True:
            try:
                item = await asyncio.wait_for(self._queue.get(), self._timeout)
            except TimeoutError:
                raise httpx2.ReadTimeout("timed out reading the response body") from None
            if item is _END:
                return
            if isinstance(item, BaseException):
                raise httpx2.RemoteProtocolError("peer closed connection without sending complete message body (incomplete chunked read)") from item
            yield item

    async def aclose(self) -> None:
        self._disconnected.set()
        if not self._task.done():
            self._task.cancel()
            await asyncio.wait([self._task])


class StreamingASGITransport(httpx2.AsyncBaseTransport):
    """Send requests straight to an ASGI app, streaming its response back."""

    def __init__(self, app: Any, client: tuple[str, int] = ("127.0.0.1", 123)) -> None:
        self.app = app
        self.client = client

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        assert isinstance(request.stream, httpx2.AsyncByteStream)
        body = b"".join([part async for part in request.stream])
        timeout = (request.extensions.get("timeout") or {}).get("read")
        scope = {
            "type": "http",
            "asgi": {"version": "3.0"},
            "http_version": "1.1",
            "method": request.method,
            "headers": [(k.lower(), v) for (k, v) in request.headers.raw],
            "scheme": request.url.scheme,
            "path": request.url.path,
            "raw_path": request.url.raw_path.split(b"?")[0],
            "query_string": request.url.query,
            "server": (request.url.host, request.url.port),
            "client": self.client,
            "root_path": "",
        }
        queue: asyncio.Queue[Any] = asyncio.Queue()
        started = asyncio.Event()
        disconnected = asyncio.Event()
        head: dict[str, Any] = {}
        body_sent = False

        async def receive() -> dict[str, Any]:
            nonlocal body_sent
            if not body_sent:
                body_sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            await disconnected.wait()
            return {"type": "http.disconnect"}

        async def send(message: MutableMapping[str, Any]) -> None:
            if message["type"] == "http.response.start":
                head["status"] = message["status"]
                head["headers"] = message.get("headers", [])
                started.set()
            elif message["type"] == "http.response.body":
                if message.get("body") and request.method != "HEAD":
                    queue.put_nowait(message["body"])
                if not message.get("more_body", False):
                    queue.put_nowait(_END)

        async def run() -> None:
            try:
                await self.app(scope, receive, send)
            except Exception as exc:  # noqa: BLE001 - reported to the reader
                head.setdefault("error", exc)
                queue.put_nowait(exc)
            finally:
                queue.put_nowait(_END)
                started.set()

        task = asyncio.get_running_loop().create_task(run())
        try:
            await asyncio.wait_for(started.wait(), timeout)
        except TimeoutError:
            disconnected.set()
            task.cancel()
            await asyncio.wait([task])
            raise httpx2.ReadTimeout("timed out waiting for the response") from None
        except BaseException:
            disconnected.set()
            task.cancel()
            raise
        if "status" not in head:
            error = head.get("error")
            raise httpx2.RemoteProtocolError("Server disconnected without sending a response.") from error
        stream = _BodyStream(queue, task, disconnected, timeout)
        return httpx2.Response(head["status"], headers=head["headers"], stream=stream)
