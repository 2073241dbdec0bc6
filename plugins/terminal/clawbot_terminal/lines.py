"""Lines of a file object (a pipe, a file, a StringIO in tests), read without blocking the loop.

The blocking ``readline`` happens in a *daemon* thread that hands each line to the loop
(``call_soon_threadsafe`` into an asyncio queue), so the gateway keeps answering while it
waits, and the process can end at any time: a thread of asyncio's default executor would be
joined at exit, i.e. wait for Enter.
"""

from __future__ import annotations

import asyncio
import threading
from typing import TextIO

_Item = str | BaseException  # a line ("" at end of input) or what reading raised


class LineReader:
    """Reads ``stream`` line by line in a daemon thread, into a queue on ``loop``.

    The thread reads ahead of the channel only as a terminal would buffer typed lines
    anyway; it stops after end of input, a read error, or when the loop is closed.
    """

    def __init__(self, stream: TextIO, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.lines: asyncio.Queue[_Item] = asyncio.Queue()
        self._stream = stream
        self.thread = threading.Thread(target=self._pump, name="terminal-stdin", daemon=True)
        self.thread.start()

    def _pump(self) -> None:
        while True:
            try:
                item: _Item = self._stream.readline()
            except BaseException as exc:  # noqa: BLE001 - handed to the channel to raise
                item = exc
            try:
                self.loop.call_soon_threadsafe(self.lines.put_nowait, item)
            except RuntimeError:  # the loop is closed: nobody is listening any more
                return
            if not isinstance(item, str) or not item:
                return

    def usable(self, loop: asyncio.AbstractEventLoop) -> bool:
        return self.loop is loop and (self.thread.is_alive() or not self.lines.empty())

    async def readline(self) -> str:
        item = await self.lines.get()
        if isinstance(item, BaseException):
            raise item
        return item
