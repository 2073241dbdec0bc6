"""``clawbot run`` in a pseudo-terminal, its screen kept by a terminal emulator (pyte).

Tests type keys and look at what a person would see: the bytes a full-screen prompt writes
(cursor moves, partial redraws) mean little on their own, the emulated screen does.
"""

from __future__ import annotations

import fcntl
import os
import signal
import struct
import subprocess
import sys
import termios
import threading
import time
from pathlib import Path

import pyte

COLUMNS, ROWS = 120, 40


def run_config(tmp_path: Path, base_url: str, extra: str = "") -> None:
    (tmp_path / "clawbot.toml").write_text(
        f'[agents.defaults.model]\nprimary = "openai/gpt-test"\n\n[providers.openai]\nbase_url = "{base_url}/v1"\napi_key = "sk-test"\n\n[gateway]\nport = 0\n'
        + extra
    )


class _Screen(pyte.Screen):
    """Answers the program's questions (where is the cursor?) as a terminal does."""

    answer = None

    def write_process_input(self, data: str) -> None:
        if self.answer is not None:
            self.answer(data)


def _controlling_terminal() -> None:
    """In the child: a session of its own whose controlling terminal is the pty, as in a real
    terminal (Ctrl-C typed while the terminal is not in raw mode becomes SIGINT)."""
    os.setsid()
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


class PtyScreen:
    """What a person sees on a pty of :data:`COLUMNS` x :data:`ROWS`, given its master side
    (read in a thread; questions the program asks the terminal are answered)."""

    def __init__(self, master: int) -> None:
        self.master = master
        self.raw = bytearray()
        self.screen = _Screen(COLUMNS, ROWS)
        self.screen.answer = lambda data: os.write(master, data.encode())
        self._stream = pyte.ByteStream(self.screen)
        self._lock = threading.Lock()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    @staticmethod
    def open() -> tuple[int, int]:
        """A fresh pty (master, slave) of :data:`COLUMNS` x :data:`ROWS`."""
        master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLUMNS, 0, 0))
        return master, slave

    def _read(self) -> None:
        while True:
            try:
                chunk = os.read(self.master, 4096)
            except OSError:  # the child closed the terminal
                return
            if not chunk:
                return
            with self._lock:
                self.raw.extend(chunk)
                self._stream.feed(chunk)

    def ended(self) -> bool:
        """Whether nothing more can appear."""
        return not self._reader.is_alive()

    def text(self) -> str:
        """The screen as lines of text, trailing blanks removed."""
        with self._lock:
            return "\n".join(line.rstrip() for line in self.screen.display).rstrip()

    def wait_for(self, wanted: str, timeout: float = 30.0) -> str:
        deadline = time.monotonic() + timeout
        while True:
            shown = self.text()
            if wanted in shown:
                return shown
            if time.monotonic() > deadline or self.ended():
                raise AssertionError(f"{wanted!r} never appeared; the screen:\n{shown}\nraw tail: {bytes(self.raw[-600:])!r}")
            time.sleep(0.02)

    def wait_gone(self, unwanted: str, timeout: float = 30.0) -> str:
        """Wait until ``unwanted`` is no longer on the screen (the bar's "working" once a turn has ended)."""
        deadline = time.monotonic() + timeout
        while unwanted in (shown := self.text()):
            if time.monotonic() > deadline or self.ended():
                raise AssertionError(f"{unwanted!r} never went; the screen:\n{shown}")
            time.sleep(0.02)
        return shown

    def wait_for_prompt(self, prompt: str = "you>", timeout: float = 30.0) -> str:
        """Wait until the prompt is drawn afresh on the last line, ready for keys: text seen
        anywhere (an earlier ``you> go``) says nothing about whether the prompt reads now, and a
        Ctrl-D typed between two prompts is lost by the terminal's line discipline."""
        deadline = time.monotonic() + timeout
        while True:
            shown = self.text()
            if shown.splitlines()[-1:] == [prompt]:
                return shown
            if time.monotonic() > deadline or self.ended():
                raise AssertionError(f"no fresh {prompt!r} on the last line; the screen:\n{shown}")
            time.sleep(0.02)

    def wait_for_question(self, ending: str, timeout: float = 30.0) -> str:
        """Wait until the screen ends with ``ending``: a question asked afresh and read now.
        Keys typed before it is drawn are echoed above it, and the answer's reply then starts
        at the end of the question's row, wrapped, as a person typing ahead would see it."""
        deadline = time.monotonic() + timeout
        while True:
            shown = self.text()
            if shown.endswith(ending):
                return shown
            if time.monotonic() > deadline or self.ended():
                raise AssertionError(f"the screen does not end with {ending!r}:\n{shown}")
            time.sleep(0.02)

    def type(self, keys: str) -> None:
        os.write(self.master, keys.encode())

    def close(self) -> None:
        self._reader.join(2)
        os.close(self.master)


class Terminal(PtyScreen):
    """A running ``clawbot`` in a pty of :data:`COLUMNS` x :data:`ROWS`."""

    def __init__(self, args: list[str], home: Path, env: dict[str, str] | None = None) -> None:
        environment = {k: v for k, v in os.environ.items() if not k.startswith("CLAWBOT_")}
        for name in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "NO_COLOR"):
            environment.pop(name, None)
        environment.update(
            {
                "CLAWBOT_HOME": str(home),
                "HOME": str(home),
                "TERM": "xterm-256color",
                "COLUMNS": str(COLUMNS),
                "LINES": str(ROWS),
            }
        )
        environment.update(env or {})
        master, slave = self.open()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "clawbot.cli.main", *args],
            cwd=home,
            env=environment,
            stdin=slave,
            stdout=slave,
            stderr=slave,
            close_fds=True,
            preexec_fn=_controlling_terminal,
        )
        os.close(slave)
        super().__init__(master)

    def ended(self) -> bool:
        return self.proc.poll() is not None and super().ended()

    def interrupt(self) -> None:
        """Ctrl-C as a signal to the process (what the kernel sends when the terminal is not in raw mode)."""
        self.proc.send_signal(signal.SIGINT)

    def wait_exit(self, timeout: float = 30.0) -> int:
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"still running {timeout} s later; the screen:\n{self.text()}") from None

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        super().close()

    def __enter__(self) -> Terminal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
