"""The terminal channel: each line typed is a direct message; replies are printed.

It runs on the gateway's event loop. The blocking ``readline`` happens in a *daemon*
thread that hands each line to the loop (``call_soon_threadsafe`` into an asyncio queue),
so replies can be printed while the user types, and Ctrl-C ends the process at once: a
thread of asyncio's default executor would be joined at exit, i.e. wait for Enter. It
works for any file object (a terminal, a pipe, a StringIO in tests). End of input ends the
channel.

The person at the keyboard is the owner (``from_owner``): whoever can type here can run
clawbot anyway. Nothing written here may draw on that person's screen: control characters
in what arrives are shown as ``\\uXXXX`` again, even though the kernel already did (a channel
cannot assume every sender is the kernel). clawbot's own notices get the notice mark on
every line, in colour when the output is a terminal (unless ``NO_COLOR`` is set); the mark
is broken up in everything else, so a reply cannot pass for an approval request.
"""

from __future__ import annotations

import asyncio
import os
import sys
import threading
from typing import TextIO

from clawbot import Channel, InboundMessage, InboundSink, OutboundMessage
from clawbot.safetext import defuse, visible

from clawbot_terminal.config import TerminalConfig

_Item = str | BaseException  # a line ("" at end of input) or what reading raised
# Bold cyan for clawbot's notices: a reply cannot produce it, its escape sequences are shown as text.
NOTICE_STYLE = "\x1b[1;36m"
RESET_STYLE = "\x1b[0m"


class _LineReader:
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


class TerminalChannel(Channel):
    name = "terminal"

    def __init__(self, config: TerminalConfig, stdin: TextIO | None = None, stdout: TextIO | None = None) -> None:
        self.config = config
        self._stdin = stdin or sys.stdin
        self._stdout = stdout or sys.stdout
        self._stopping = False
        self._counter = 0
        self._reader: _LineReader | None = None

    def _styled(self) -> bool:
        isatty = getattr(self._stdout, "isatty", None)
        return bool(isatty and isatty()) and not os.environ.get("NO_COLOR")

    def render(self, message: OutboundMessage) -> str:
        """What the terminal shows for ``message``: escaped, and a notice marked line by line."""
        mark = OutboundMessage.NOTICE_MARK
        text = defuse(visible(message.text.rstrip("\n")), (mark,))
        if not message.notice:
            return text + "\n"
        lines = [f"{mark} {line}" for line in text.split("\n")]
        if self._styled():
            lines = [f"{NOTICE_STYLE}{line}{RESET_STYLE}" for line in lines]
        return "\n".join(lines) + "\n"

    def _write(self, text: str) -> None:
        self._stdout.write(text)
        self._stdout.flush()

    def _lines(self) -> _LineReader:
        loop = asyncio.get_running_loop()
        if self._reader is None or not self._reader.usable(loop):
            self._reader = _LineReader(self._stdin, loop)
        return self._reader

    async def start(self, sink: InboundSink) -> None:
        interactive = self._stdin.isatty()
        reader = self._lines()
        while not self._stopping:
            if interactive:
                self._write(self.config.prompt)
            line = await reader.readline()
            if not line:  # end of input
                return
            text = line.rstrip("\n")
            if not text.strip():
                continue
            self._counter += 1
            answered = await sink(
                InboundMessage(
                    channel=self.name,
                    peer_id=self.config.peer_id,
                    text=text,
                    chat_type="direct",
                    sender_id=self.config.peer_id,
                    sender_name=self.config.user_name,
                    message_id=str(self._counter),
                    from_owner=True,
                )
            )
            await asyncio.wait([answered])  # turn-taking: the next prompt after the reply

    async def send(self, message: OutboundMessage) -> None:
        self._write(self.render(message))

    async def stop(self) -> None:
        self._stopping = True
