"""The interactive terminal: a prompt that stays usable while the agent works above it.

Built on prompt_toolkit, imported only here and only when the channel starts on a real
terminal (``clawbot --help``, plugin discovery and piped runs never load it). Whole lines
are printed above the prompt (``run_in_terminal`` erases it, prints, and draws it again);
the line a streaming reply has begun stays just above the input until it ends, so the
text appears as it is written and the prompt is never torn. Line editing and a history
(kept in a private file under the state directory) come with the prompt.

Keys: Ctrl-C clears a typed line, and on an empty one interrupts (the channel stops the
running turn, or quits); Ctrl-D on an empty line quits.

Approvals: while one waits, the prompt turns into a question naming it (``approve 5f9783
(exec: rm -rf build) (1 of 2)?``, the oldest first) and is answered by typing a word and
Enter: ``o`` or ``once``, ``always`` (never a single letter), ``d`` or ``deny``; ``show``
prints the request in full, and one whose notice leaves something out is not allowed before
that. Anything else typed is an ordinary line, so a message begun as the question appears
("also, ...") stays one, and so does a word begun before any question showed (the model's
"o or d?" answered); a word begun under another question (another approval came first, or
this one was answered elsewhere) answers nothing and goes back into the line. Esc on an
empty line puts the question away (``/approve`` still works). Questions whose approval was
answered elsewhere or expired disappear.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

from clawbot import ApprovalOffer, OutboundMessage
from clawbot.safetext import defuse, visible
from clawbot.statefile import make_private_dir

log = logging.getLogger(__name__)
MARKS = (OutboundMessage.NOTICE_MARK,)


class Quit(str):
    """What :meth:`PromptScreen.read` returns when the chat should end (never a typed line)."""


QUIT = Quit("")
# The words that answer the approval asked about, typed alone on the line and sent with Enter.
ANSWERS = {
    "o": "allow-once",
    "once": "allow-once",
    "allow-once": "allow-once",
    "always": "allow-always",
    "allow-always": "allow-always",
    "d": "deny",
    "deny": "deny",
    "show": "show",
}
LABELS = {"allow-once": "[o]nce", "allow-always": "always", "deny": "[d]eny"}
HINT = " a lone o, always, d or show answers the question; write more to say it to the agent"
_SHOW_TYPED = re.compile(r"/approve\s+(\S+)\s+show\s*", re.I)
_UNSET = object()  # no line is being typed
# How often the prompt is drawn again unasked: the turn's bar and the approval questions
# follow what the gateway says, which may change with nothing written to the terminal.
REFRESH_S = 0.5


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
        waiting: Callable[[], frozenset[str] | None],
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
        self._waiting = waiting  # the approvals still waiting (None: unknown, show every offer)
        self._began_for: object = _UNSET  # the approval asked about when the line being typed began
        self._seen: set[str] = set()  # approvals shown in full here
        self._put_back = ""  # a word that answered nothing, back in the next line
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
            refresh_interval=REFRESH_S,
        )
        self.session.default_buffer.on_text_changed += self._typed

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

        @keys.add("escape", filter=empty & Condition(lambda: bool(self._shown())))
        def _put_away(event) -> None:  # noqa: ANN001
            self._offers.remove(self._shown()[0])
            event.app.invalidate()

        return keys

    def _shown(self) -> list[ApprovalOffer]:
        """The offers still waiting, oldest first (the others are forgotten)."""
        waiting = self._waiting()
        if waiting is not None:
            self._offers = [o for o in self._offers if o.id in waiting]
        return self._offers

    def _typed(self, buffer) -> None:  # noqa: ANN001 - a prompt_toolkit Buffer
        if not buffer.text:
            self._began_for = _UNSET
        elif self._began_for is _UNSET:
            shown = self._shown()
            self._began_for = shown[0].id if shown else None

    def _message(self) -> list[tuple[str, str]]:
        parts = [("", self._partial + "\n")] if self._partial else []
        shown = self._shown()
        if shown:
            offer = shown[0]
            what = f" ({defuse(visible(offer.summary), MARKS)})" if offer.summary else ""
            count = f" (1 of {len(shown)})" if len(shown) > 1 else ""
            choices = ", ".join(LABELS.get(c, c) for c in offer.choices)
            parts.append(("bold", f"approve {defuse(visible(offer.id), MARKS)}{what}{count}? {choices}, then Enter (Esc: later) "))
        else:
            parts.append(("", self._prompt))
        return parts

    def _answered(self, line: str) -> str | None:
        """If ``line`` answers the approval asked about: what to tell the user (it is not a message)."""
        choice = ANSWERS.get(line.strip().lower())
        shown = self._shown()
        if choice is None or not shown:
            return None
        offer = shown[0]
        if self._began_for is None:  # begun before any question showed: a message (a reply to the agent)
            return None
        if self._began_for != offer.id:
            self._put_back = line
            return (
                "The approval asked about changed while you typed; nothing was answered and your word "
                "is back in the line: read the question, then Enter answers it."
            )
        if choice == "show":  # the question stays: the answer comes after reading
            self._seen.add(offer.id)
            self._on_answer(offer, choice)
            return ""
        if choice not in offer.choices:
            return "This one cannot be allowed always; type once or deny."
        if choice != "deny" and "show" in offer.choices and offer.id not in self._seen:
            return "Its notice hides part of what would run: type show to see all of it first, then answer (deny works unseen)."
        self._offers.remove(offer)
        self._on_answer(offer, choice)
        return ""

    def _toolbar(self) -> str | None:
        parts = [" working\u2026  Ctrl-C or /stop stops it"] if self._busy() else []
        if self._shown() and len("  ".join([*parts, HINT])) < self.columns():
            parts.append(HINT)
        return "  ".join(parts) or None

    async def read(self) -> str:
        """The next line typed (shown again above the prompt), or :data:`QUIT`. A line that
        answers the approval asked about is taken here, not returned."""
        while True:
            line = await self._prompt_once()
            if isinstance(line, Quit):
                if self._partial:  # what a reply had begun stays on the screen
                    self._print(self._partial + "\n")
                    self._partial = ""
                return line
            typed = _SHOW_TYPED.fullmatch(line.strip())
            if typed:  # shown in full by hand: the question may allow it now
                self._seen.add(typed.group(1))
            answered = self._answered(line)
            self._began_for = _UNSET
            if answered is None:
                await self.write(f"{self._prompt}{visible(line)}\n")
                return line
            if answered:
                await self.write(f"{answered}\n")

    async def _prompt_once(self) -> str:
        from prompt_toolkit.patch_stdout import patch_stdout

        if self._quitting:
            return QUIT
        with patch_stdout(raw=True):  # stray prints (a warning) go above the prompt too
            default, self._put_back = self._put_back, ""
            if default:  # typed under the question shown now, whatever comes next
                shown = self._shown()
                self._began_for = shown[0].id if shown else None
            try:
                # SIGINT stays with `clawbot run`, which hands it to the channel (prompt_toolkit would
                # take the handler over and, when the prompt ends, leave none).
                return await self.session.prompt_async(self._message, bottom_toolbar=self._toolbar, handle_sigint=False, default=default)
            except EOFError:
                return QUIT

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

        columns = self.columns()
        if len(line) < columns // 2:  # no character is wider than two columns
            return "", line
        rows, start, width = [], 0, 0
        for index, char in enumerate(line):
            width += get_cwidth(char)
            if width > columns:
                rows.append(line[start:index] + "\n")
                start, width = index, get_cwidth(char)
        return "".join(rows), line[start:]

    def columns(self) -> int:
        return max(20, self.session.app.output.get_size().columns)

    def _print(self, text: str) -> None:
        self._stdout.write(text)
        self._stdout.flush()

    def offer(self, offer: ApprovalOffer) -> None:
        self._offers.append(offer)
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
