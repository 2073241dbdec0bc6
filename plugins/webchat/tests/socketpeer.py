"""A WebSocket connection as the web chat's handler sees it, without the network: what a
page sends is queued, what the handler sends is recorded (the transport alone is faked)."""

from __future__ import annotations

import asyncio
from typing import Any


class PagePeer:
    remote = "127.0.0.1:test"

    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []
        self.closed: tuple[int, str] | None = None
        self._incoming: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()
        self._arrived = asyncio.Event()

    # -- the handler's side ------------------------------------------------------------------

    async def send(self, data: dict[str, Any]) -> None:
        if self.closed is not None:
            raise ConnectionResetError("socket closed")
        self.sent.append(data)
        self._arrived.set()

    def __aiter__(self):
        return self._frames()

    async def _frames(self):
        while (frame := await self._incoming.get()) is not None:
            yield frame

    async def close(self, code: int = 1000, reason: str = "") -> None:
        self.closed = (code, reason)
        self._incoming.put_nowait(None)

    # -- the page's side ---------------------------------------------------------------------

    def page_sends(self, frame: dict[str, Any]) -> None:
        self._incoming.put_nowait(frame)

    def disconnect(self) -> None:
        self._incoming.put_nowait(None)

    def of_type(self, kind: str) -> list[dict[str, Any]]:
        return [frame for frame in self.sent if frame.get("type") == kind]

    async def wait_for(self, check, timeout: float = 30.0) -> dict[str, Any]:
        """The first frame sent for which ``check(frame)`` holds, waiting up to ``timeout`` s."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            for frame in self.sent:
                if check(frame):
                    return frame
            remaining = deadline - loop.time()
            if remaining <= 0:
                raise AssertionError(f"no such frame; sent so far: {self.sent}")
            self._arrived.clear()
            try:
                await asyncio.wait_for(self._arrived.wait(), remaining)
            except TimeoutError:
                pass
