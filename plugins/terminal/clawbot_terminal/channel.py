"""The terminal channel: each line typed is a direct message; replies are printed.

It runs on the gateway's event loop; the blocking ``readline`` happens in a worker thread
so replies can be printed while the user types. End of input ends the channel.
"""

from __future__ import annotations

import asyncio
import sys
from typing import TextIO

from clawbot import Channel, InboundMessage, InboundSink, OutboundMessage

from clawbot_terminal.config import TerminalConfig


class TerminalChannel(Channel):
    name = "terminal"

    def __init__(self, config: TerminalConfig, stdin: TextIO | None = None, stdout: TextIO | None = None) -> None:
        self.config = config
        self._stdin = stdin or sys.stdin
        self._stdout = stdout or sys.stdout
        self._stopping = False
        self._counter = 0

    def _write(self, text: str) -> None:
        self._stdout.write(text)
        self._stdout.flush()

    async def start(self, sink: InboundSink) -> None:
        interactive = self._stdin.isatty()
        while not self._stopping:
            if interactive:
                self._write(self.config.prompt)
            line = await asyncio.to_thread(self._stdin.readline)
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
                )
            )
            await asyncio.wait([answered])  # turn-taking: the next prompt after the reply

    async def send(self, message: OutboundMessage) -> None:
        self._write(message.text.rstrip("\n") + "\n")

    async def stop(self) -> None:
        self._stopping = True
