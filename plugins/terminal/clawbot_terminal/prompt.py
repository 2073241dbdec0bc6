"""The interactive terminal: a prompt that stays usable while the agent works above it.

Built on prompt_toolkit, imported only here and only when the channel starts on a real
terminal (``clawbot --help``, plugin discovery and piped runs never load it). Whole lines
are printed above the prompt (``run_in_terminal`` erases it, prints, and draws it again);
the line a streaming reply has begun stays just above the input until it ends, so the
text appears as it is written and the prompt is never torn. Line editing and a history
(kept in a private file under the state directory) come with the prompt.

Keys: Ctrl-C clears a typed line, and on an empty one interrupts (the channel stops the
running turn, or quits); Ctrl-D on an empty line quits. While an approval is offered and
nothing is typed, ``o``, ``a`` and ``d`` answer it (allow once, allow always, deny), Esc
puts the choice away (``/approve`` still works).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

from clawbot import ApprovalOffer
from clawbot.safetext import visible
from clawbot.statefile import make_private_dir

log = logging.getLogger(__name__)


class Quit(str):
    """What :meth:`PromptScreen.read` returns when the chat should end (never a typed line)."""


QUIT = Quit("")
KEYS = {"o": "allow-once", "a": "allow-always", "d": "deny"}
LABELS = {"allow-once": "[o]nce", "allow-always": "[a]lways", "deny": "[d]eny"}


def private_history(path: Path) -> Path:
    """``path``, created private (0600) in a private directory; a file others could read is
    made private again (it holds everything typed)."""
    make_private_dir(path.parent)
    fd = os.open(path, os.O_CREAT | os.O_APPEND | os.O_WRONLY, 0o600)
    try:
        if os.fstat(fd).st_mode & 0o077:
            os.fchmod(fd, 0o600)
    finally:
        os.close(fd)
    return path


class PromptScreen:
    """The prompt, and everything written around it while it waits for a line."""

    def __init__(
        self,
        prompt: str,
        stdin: TextIO,
        stdout: TextIO,
        history: Path | None,
        on_ctrl_c: Callable[[], None],
        on_answer: Callable[[ApprovalOffer, str], None],
        busy: Callable[[], bool],
    ) -> None:
        from prompt_toolkit import PromptSession
        from prompt_toolkit.history import FileHistory, InMemoryHistory
        from prompt_toolkit.input import create_input
        from prompt_toolkit.output import create_output

        self._prompt = prompt
        self._stdout = stdout
        self._partial = ""  # the line a streaming reply has begun
        self._offers: list[ApprovalOffer] = []
        self._busy = busy
        self._on_ctrl_c = on_ctrl_c
        self._on_answer = on_answer
        self._quitting = False
        kept = InMemoryHistory()
        if history is not None:
            try:
                kept = FileHistory(str(private_history(history)))
            except OSError as exc:  # a read-only state directory must not cost the chat
                log.warning("the terminal keeps no history: %s", exc)
        self.session: PromptSession[str] = PromptSession(
            history=kept,
            key_bindings=self._keys(),
            erase_when_done=True,  # the accepted line is printed again without the streaming line above it
            input=create_input(stdin),
            output=create_output(stdout),
        )

    def _keys(self):  # noqa: ANN202 - KeyBindings
        from prompt_toolkit.filters import Condition
        from prompt_toolkit.key_binding import KeyBindings

        keys = KeyBindings()
        empty = Condition(lambda: not self.session.default_buffer.text)

        @keys.add("c-c")
        def _ctrl_c(event) -> None:  # noqa: ANN001
            if event.current_buffer.text:
                event.current_buffer.reset()
            else:
                self._on_ctrl_c()

        @keys.add("c-d", filter=empty)
        def _ctrl_d(event) -> None:  # noqa: ANN001
            event.app.exit(result=QUIT)

        for key, choice in KEYS.items():
            offered = Condition(lambda choice=choice: bool(self._offers) and choice in self._offers[0].choices)

            @keys.add(key, filter=empty & offered)
            def _answer(event, choice=choice) -> None:  # noqa: ANN001
                offer = self._offers.pop(0)
                self._on_answer(offer, choice)
                event.app.invalidate()

        @keys.add("escape", filter=empty & Condition(lambda: bool(self._offers)))
        def _put_away(event) -> None:  # noqa: ANN001
            self._offers.pop(0)
            event.app.invalidate()

        return keys

    def _message(self) -> list[tuple[str, str]]:
        parts = [("", self._partial + "\n")] if self._partial else []
        if self._offers:
            offer = self._offers[0]
            choices = " ".join(LABELS.get(c, c) for c in offer.choices)
            parts.append(("bold", f"approve {visible(offer.id)}? {choices} (Esc: later) "))
        else:
            parts.append(("", self._prompt))
        return parts

    def _toolbar(self) -> str | None:
        return " working\u2026  Ctrl-C or /stop stops it" if self._busy() else None

    async def read(self) -> str:
        """The next line typed (shown again above the prompt), or :data:`QUIT`."""
        from prompt_toolkit.patch_stdout import patch_stdout

        if self._quitting:
            return QUIT
        with patch_stdout(raw=True):  # stray prints (a warning) go above the prompt too
            try:
                # SIGINT stays with `clawbot run`, which hands it to the channel (prompt_toolkit would
                # take the handler over and, when the prompt ends, leave none).
                line = await self.session.prompt_async(self._message, bottom_toolbar=self._toolbar, handle_sigint=False)
            except EOFError:
                return QUIT
        if not isinstance(line, Quit):
            await self.write(f"{self._prompt}{visible(line)}\n")
        return line

    async def write(self, text: str) -> None:
        """Show ``text``: whole lines above the prompt, an unfinished last line just above the input."""
        from prompt_toolkit.application import run_in_terminal

        head, newline, self._partial = (self._partial + text).rpartition("\n")
        head += newline
        full, self._partial = self._full_rows(self._partial)
        head += full
        if head:
            await run_in_terminal(lambda: self._print(head))
        self.refresh()

    def _full_rows(self, line: str) -> tuple[str, str]:
        """The rows of ``line`` that fill the terminal's width (printed above, as the terminal
        would wrap them), and the rest: a long line cannot push the prompt off the screen."""
        from prompt_toolkit.utils import get_cwidth

        columns = max(20, self.session.app.output.get_size().columns)
        if len(line) < columns // 2:  # no character is wider than two columns
            return "", line
        rows, start, width = [], 0, 0
        for index, char in enumerate(line):
            width += get_cwidth(char)
            if width > columns:
                rows.append(line[start:index] + "\n")
                start, width = index, get_cwidth(char)
        return "".join(rows), line[start:]

    def _print(self, text: str) -> None:
        self._stdout.write(text)
        self._stdout.flush()

    def offer(self, offer: ApprovalOffer) -> None:
        self._offers.append(offer)
        self.refresh()

    def forget(self, approval_id: str) -> None:
        """An offer answered some other way (``/approve`` typed out)."""
        self._offers = [o for o in self._offers if o.id != approval_id]
        self.refresh()

    def refresh(self) -> None:
        app = self.session.app
        if app.is_running:
            app.invalidate()

    def quit(self) -> None:
        self._quitting = True
        app = self.session.app
        if app.is_running and not app.is_done:
            app.exit(result=QUIT)
