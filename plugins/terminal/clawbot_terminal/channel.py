"""The terminal channel: each line typed is a direct message; replies are printed.

Input is read while a turn runs, so ``/stop`` (or any other line) reaches the gateway at
once; the gateway runs a session's turns one after another. On a real terminal the channel
is interactive (:mod:`clawbot_terminal.prompt`): replies stream in as they are written,
each tool call shows as a dim line, an approval is asked about at the prompt (a word and
Enter answers it), Ctrl-C stops the running turn (a second one, or one when nothing runs,
quits) and Ctrl-D quits: clawbot itself, with every other channel it serves (the person at
the keyboard asked to quit). Whether a turn runs, and which approvals still wait, the channel
asks the gateway (its sink): a turn may start from a line beginning with ``/`` or from a
finished command's report, and an approval may be answered elsewhere or expire. Otherwise
(a pipe, a file, tests) lines are read in a background thread (:mod:`clawbot_terminal.lines`)
and answered like a script: each line its own turn, sent once the line before it was
answered (a slash command at once, so ``/stop`` reaches a running turn); the end of the input
quits clawbot, as Ctrl-D does, once every line has been answered (a service has no terminal
channel at all: :meth:`available`); replies still stream when the output is a terminal.
With no input at all (standard input closed or ``/dev/null``: started as a service) the
channel does not run (:meth:`TerminalChannel.available`) and the gateway serves its other
channels.

The person at the keyboard is the owner (``from_owner``): whoever can type here can run
clawbot anyway. What is shown is made inert (:mod:`clawbot_terminal.render`).
"""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
import time
from pathlib import Path
from typing import TextIO

from clawbot import (
    Activity,
    ActivitySink,
    ApprovalOffer,
    Channel,
    InboundMessage,
    InboundSink,
    OutboundMessage,
)

from clawbot_terminal.config import TerminalConfig
from clawbot_terminal.lines import LineReader
from clawbot_terminal.render import NOTICE_STYLE, RESET_STYLE, Display, render_message

__all__ = ["NOTICE_STYLE", "RESET_STYLE", "TerminalChannel"]

# Two Ctrl-C this close together quit even while a turn is still stopping.
DOUBLE_CTRL_C_S = 1.5


def _is_terminal(stream: TextIO) -> bool:
    """A real terminal (a file descriptor prompt_toolkit can drive), not a test double."""
    try:
        return bool(stream.isatty()) and stream.fileno() >= 0
    except (AttributeError, OSError, ValueError):
        return False


class TerminalChannel(Channel):
    name = "terminal"

    def __init__(
        self,
        config: TerminalConfig,
        stdin: TextIO | None = None,
        stdout: TextIO | None = None,
        history: Path | None = None,
    ) -> None:
        self.config = config
        self._stdin = stdin or sys.stdin
        self._stdout = stdout or sys.stdout
        self._history = history
        self._stopping = False
        self._counter = 0
        self._reader: LineReader | None = None
        self._screen = None  # the interactive prompt (clawbot_terminal.prompt.PromptScreen) while it runs
        self._sink: InboundSink | None = None
        self._answers: set[asyncio.Future[None]] = set()  # a piped chat ends once these are done
        self._previous: asyncio.Future[None] | None = None  # a piped chat's last line's answer
        self._tasks: set[asyncio.Task[None]] = set()
        self._last_ctrl_c = float("-inf")
        self._stop_asked = False
        self._display = Display(self._styled(), self._columns)

    def _styled(self) -> bool:
        isatty = getattr(self._stdout, "isatty", None)
        return bool(isatty and isatty()) and not os.environ.get("NO_COLOR")

    def render(self, message: OutboundMessage) -> str:
        """What the terminal shows for ``message``: escaped, and a notice marked line by line."""
        return render_message(message, self._styled(), self._columns())

    # -- the gateway's side ----------------------------------------------------------------

    def available(self) -> str | None:
        """No chat without input: a closed standard input, or ``/dev/null`` (what a service
        manager gives), means nobody can type here. A pipe or a file is read as usual."""
        if self._stdin is None:
            return "no terminal: standard input is closed"
        try:
            fd = self._stdin.fileno()
        except (AttributeError, OSError, ValueError):
            return None  # not a file descriptor (a test's stream): read it as it is
        try:
            found = os.fstat(fd)
        except OSError:
            return "no terminal: standard input is closed"
        try:
            if os.path.samestat(found, os.stat(os.devnull)):
                return "no terminal: standard input is /dev/null"
        except OSError:
            pass
        return None

    async def start(self, sink: InboundSink) -> None:
        self._sink = sink
        self._display = Display(self._styled(), self._columns)
        if _is_terminal(self._stdin) and _is_terminal(self._stdout):
            await self._interactive()
        else:
            await self._plain()

    def live(self, message: InboundMessage) -> ActivitySink | None:
        self._stop_asked = False
        self._refresh()  # a turn starts: the prompt's bar says so
        return self._activity if self._screen is not None or self._styled_output() else None

    async def send(self, message: OutboundMessage) -> None:
        await self._write(self._display.message(message))
        if message.approval is not None and message.notice and self._screen is not None:
            self._screen.offer(message.approval)

    def interrupt(self) -> bool:
        """Ctrl-C: stop the running turn; quit when nothing runs or on a quick second one.
        Only the interactive terminal takes it: a piped run ends as it always did."""
        if self._screen is None:
            return False
        now = time.monotonic()
        quick, self._last_ctrl_c = now - self._last_ctrl_c < DOUBLE_CTRL_C_S, now
        # "Ctrl-C again to quit" holds however long the stop takes, until the next turn starts.
        if self._busy() and not quick and not self._stop_asked:
            self._stop_asked = True
            self._submit("/stop")
            self._spawn(self._write(self._display.note("Stopping the reply (Ctrl-C again to quit).")))
        else:
            self._screen.quit()
        return True

    async def stop(self) -> None:
        self._stopping = True
        if self._screen is not None:
            self._screen.quit()

    # -- reading -----------------------------------------------------------------------------

    async def _interactive(self) -> None:
        from clawbot_terminal.prompt import PromptScreen, Quit

        self._screen = PromptScreen(
            self.config.prompt,
            self._stdin,
            self._stdout,
            self._history,
            on_ctrl_c=self.interrupt,
            on_answer=self._answer,
            busy=self._busy,
            waiting=self._approvals_waiting,
        )
        try:
            while not self._stopping:
                line = await self._screen.read()
                if isinstance(line, Quit):
                    self._quit_all()
                    return
                self._line(line)
        finally:
            self._screen = None

    async def _plain(self) -> None:
        loop = asyncio.get_running_loop()
        if self._reader is None or not self._reader.usable(loop):
            self._reader = LineReader(self._stdin, loop)
        while not self._stopping:
            line = await self._reader.readline()
            if not line:  # end of input: the lines already sent are still answered
                break
            text = line.rstrip("\n")
            if text.strip():
                self._spawn(self._in_turn(text))
        while self._tasks or self._answers:
            await asyncio.wait({*self._tasks, *self._answers})
        self._quit_all()

    def _quit_all(self) -> None:
        """The person here asked to quit (Ctrl-D, or the end of piped input once every line
        was answered): clawbot quits, not only this chat, whatever other channels it serves."""
        quit_all = getattr(self._sink, "quit", None)
        if not self._stopping and quit_all is not None:
            quit_all()

    def _line(self, text: str) -> None:
        if text.strip():
            self._submit(text)

    def _message(self, text: str, message_id: str | None = None) -> InboundMessage:
        """``text`` as the owner's message (without an id: what names this chat's session)."""
        return InboundMessage(
            channel=self.name,
            peer_id=self.config.peer_id,
            text=text,
            chat_type="direct",
            sender_id=self.config.peer_id,
            sender_name=self.config.user_name,
            message_id=message_id,
            from_owner=True,
        )

    async def _in_turn(self, text: str) -> None:
        """A piped line: sent once the line before it was answered (lines of a script each
        get their own answer, never merged with the next); a command goes at once."""
        previous, done = self._previous, asyncio.get_running_loop().create_future()
        if not text.startswith("/"):
            self._previous = done
        try:
            if previous is not None and not text.startswith("/"):
                await asyncio.wait([previous])
            self._counter += 1
            answered = await self._deliver(self._message(text, str(self._counter)))
            if answered is not None:
                await asyncio.wait([answered])
        finally:
            done.set_result(None)

    def _submit(self, text: str) -> None:
        """Hand ``text`` to the gateway as the owner's message, without waiting for the answer."""
        self._counter += 1
        self._spawn(self._deliver(self._message(text, str(self._counter))))

    async def _deliver(self, message: InboundMessage) -> asyncio.Future[None] | None:
        assert self._sink is not None
        answered = await self._sink(message)
        if answered is not None:
            self._answers.add(answered)
            answered.add_done_callback(self._answered)
        self._refresh()
        return answered

    def _answered(self, answered: asyncio.Future[None]) -> None:
        self._answers.discard(answered)
        self._refresh()

    def _busy(self) -> bool:
        """Whether a turn runs in this chat's session, as the gateway knows it."""
        busy = getattr(self._sink, "busy", None)
        return bool(busy(self._message(""))) if busy is not None else False

    def _approvals_waiting(self) -> frozenset[str] | None:
        waiting = getattr(self._sink, "approvals_waiting", None)
        return waiting(self._message("")) if waiting is not None else None

    def _answer(self, offer: ApprovalOffer, choice: str) -> None:
        """An approval answered at the prompt: sent as the owner would type it."""
        what = f" ({offer.summary})" if offer.summary else ""
        self._spawn(self._write(self._display.note(f"approve {offer.id}{what}: {choice}")))
        self._submit(f"/approve {offer.id} {choice}")

    # -- writing -----------------------------------------------------------------------------

    async def _activity(self, event: Activity) -> None:
        await self._write(self._display.activity(event))

    def _columns(self) -> int | None:
        """How wide the terminal shown on is (None when the output is no terminal)."""
        if self._screen is not None:
            return self._screen.columns()
        if not self._styled_output():
            return None
        return shutil.get_terminal_size().columns

    def _styled_output(self) -> bool:
        """Piped input with a terminal to show it on still streams; piped output gets whole replies."""
        isatty = getattr(self._stdout, "isatty", None)
        return bool(isatty and isatty())

    async def _write(self, text: str) -> None:
        if not text:
            return
        if self._screen is not None:
            await self._screen.write(text)
        else:
            self._stdout.write(text)
            self._stdout.flush()

    def _refresh(self) -> None:
        if self._screen is not None:
            self._screen.refresh()

    def _spawn(self, coro) -> None:  # noqa: ANN001 - a coroutine
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
