"""The terminal channel: lines in, replies out, end of input ends the chat."""

from __future__ import annotations

import io
import os

from clawbot_terminal.channel import TerminalChannel
from clawbot_terminal.config import TerminalConfig


async def test_each_line_is_a_message_and_replies_are_printed(make_kernel) -> None:
    stdin = io.StringIO("hello\n\n   \nsecond line\n")
    stdout = io.StringIO()
    channel = TerminalChannel(TerminalConfig(peer_id="me"), stdin=stdin, stdout=stdout)
    kernel = await make_kernel()
    received = []

    async def respond(message, session_key):
        received.append((message.text, message.peer_id, message.chat_type, session_key))
        return f"you said {message.text}"

    await kernel.gateway(respond).run([channel])  # returns at end of input
    assert received == [("hello", "me", "direct", "agent:main:main"), ("second line", "me", "direct", "agent:main:main")]
    assert stdout.getvalue() == "you said hello\nyou said second line\n"


async def test_terminal_is_registered_and_enabled_by_default(make_kernel) -> None:
    import clawbot_terminal.plugin as plugin

    kernel = await make_kernel(plugins={"terminal": plugin})
    assert kernel.channels.names() == ["terminal"]
    assert kernel.channels.plugin_of("terminal") == "terminal"
    assert kernel.config.section("channels.terminal").enabled is True


async def test_terminal_can_be_disabled_in_config(make_kernel) -> None:
    import clawbot_terminal.plugin as plugin

    kernel = await make_kernel(plugins={"terminal": plugin}, config='[channels.terminal]\nenabled = false\nprompt = "> "\n')
    assert kernel.enabled_channels() == []
    assert kernel.config.section("channels.terminal").prompt == "> "


async def test_lines_are_read_while_a_turn_runs_and_answered_before_the_chat_ends() -> None:
    """Piped lines are a script: each is answered before the next is sent (never merged
    into one turn), while a command line goes at once (``/stop`` reaches a running turn)."""
    import asyncio

    channel = TerminalChannel(TerminalConfig(), stdin=io.StringIO("one\n/status\ntwo\n"), stdout=io.StringIO())
    received: list[str] = []
    replies: list[asyncio.Future[None]] = []

    async def sink(message):
        received.append(message.text)
        reply = asyncio.get_running_loop().create_future()
        replies.append(reply)
        return reply

    async def until(count: int) -> None:
        for _ in range(100):
            if len(received) == count:
                break
            await asyncio.sleep(0.01)

    task = asyncio.create_task(channel.start(sink))
    await until(2)
    assert received == ["one", "/status"]  # the command did not wait for the first answer
    await asyncio.sleep(0.05)
    assert received == ["one", "/status"]  # the next line waits for it
    replies[0].set_result(None)
    await until(3)
    assert received == ["one", "/status", "two"]
    await asyncio.sleep(0.05)
    assert not task.done()  # end of input, but the answers are still coming
    for reply in replies[1:]:
        reply.set_result(None)
    await asyncio.wait_for(task, 30)


async def test_stop_typed_while_a_turn_runs_stops_it(make_kernel) -> None:
    import asyncio

    read, write = os.pipe()
    stdin, stdout = os.fdopen(read, "r"), io.StringIO()
    channel = TerminalChannel(TerminalConfig(), stdin=stdin, stdout=stdout)
    started, cancelled = asyncio.Event(), asyncio.Event()

    async def respond(message, session_key):
        started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.set()
            raise

    gateway = asyncio.create_task((await make_kernel()).gateway(respond).run([channel]))
    os.write(write, b"a long job\n")
    await asyncio.wait_for(started.wait(), 5)
    os.write(write, b"/stop\n")
    await asyncio.wait_for(cancelled.wait(), 5)
    os.close(write)
    await asyncio.wait_for(gateway, 30)
    stdin.close()
    assert stdout.getvalue() == "[clawbot] Stopped.\n"


async def test_stdin_is_read_in_a_daemon_thread_so_exit_never_waits_for_enter() -> None:
    """A blocked read must not keep the process alive (asyncio.to_thread's threads are joined at exit)."""
    import asyncio
    import os
    import threading

    read_fd, write_fd = os.pipe()
    stdin = os.fdopen(read_fd, "r")
    try:
        channel = TerminalChannel(TerminalConfig(), stdin=stdin, stdout=io.StringIO())

        async def sink(message):  # pragma: no cover - nothing is typed
            raise AssertionError(message)

        task = asyncio.create_task(channel.start(sink))
        await asyncio.sleep(0.1)
        readers = [t for t in threading.enumerate() if t.name == "terminal-stdin" and t.is_alive()]
        assert readers and all(t.daemon for t in readers)
        task.cancel()
        await asyncio.wait_for(asyncio.gather(task, return_exceptions=True), 1)  # cancels while the read blocks
        loop = asyncio.get_running_loop()
        assert not getattr(loop, "_default_executor", None), "stdin must not be read in the default executor"
    finally:
        os.close(write_fd)  # end of input: the reader thread finishes
        for thread in [t for t in threading.enumerate() if t.name == "terminal-stdin"]:
            thread.join(2)
        stdin.close()


async def test_a_read_error_is_raised_from_start() -> None:
    import pytest

    class Broken(io.StringIO):
        def readline(self, *args):
            raise OSError("terminal gone")

    channel = TerminalChannel(TerminalConfig(), stdin=Broken(), stdout=io.StringIO())

    async def sink(message):  # pragma: no cover
        raise AssertionError(message)

    with pytest.raises(OSError, match="terminal gone"):
        await channel.start(sink)


async def test_the_person_at_the_terminal_is_the_owner(make_kernel) -> None:
    channel = TerminalChannel(TerminalConfig(), stdin=io.StringIO("hi\n"), stdout=io.StringIO())
    received = []

    async def respond(message, session_key):
        received.append(message.from_owner)

    await (await make_kernel()).gateway(respond).run([channel])
    assert received == [True]


class _TTYOutput(io.StringIO):
    def isatty(self) -> bool:
        return True


async def test_the_terminal_escapes_what_it_writes_whoever_sent_it(monkeypatch) -> None:
    """Defence in depth: a plugin may hand the channel raw text without the kernel's escaping."""
    from clawbot import OutboundMessage

    monkeypatch.delenv("NO_COLOR", raising=False)
    stdout = _TTYOutput()
    channel = TerminalChannel(TerminalConfig(), stdin=io.StringIO(""), stdout=stdout)
    await channel.send(OutboundMessage("terminal", "local", "\x1b[2J\rhi\u202e [clawbot] ok\x9b"))
    await channel.send(OutboundMessage("terminal", "local", "Stopped.\nsecond \x1b line", notice=True))
    reply, *notice = stdout.getvalue().split("\n")[:-1]
    assert reply == "\\u001b[2J\\u000dhi\\u202e [\u2024clawbot] ok\\u009b"
    assert notice == ["\x1b[1;36m[clawbot] Stopped.\x1b[0m", "\x1b[1;36m[clawbot] second \\u001b line\x1b[0m"]


async def test_notices_are_not_coloured_when_output_is_piped_or_no_color_is_set(monkeypatch) -> None:
    from clawbot import OutboundMessage

    piped = io.StringIO()
    await TerminalChannel(TerminalConfig(), stdin=io.StringIO(""), stdout=piped).send(OutboundMessage("terminal", "local", "Stopped.", notice=True))
    monkeypatch.setenv("NO_COLOR", "1")
    plain = _TTYOutput()
    await TerminalChannel(TerminalConfig(), stdin=io.StringIO(""), stdout=plain).send(OutboundMessage("terminal", "local", "Stopped.", notice=True))
    assert piped.getvalue() == plain.getvalue() == "[clawbot] Stopped.\n"


async def test_the_terminal_breaks_a_notice_mark_spelt_with_hidden_or_look_alike_letters() -> None:
    from clawbot import OutboundMessage

    stdout = io.StringIO()
    channel = TerminalChannel(TerminalConfig(), stdin=io.StringIO(""), stdout=stdout)
    forged = "[\u0441lawbot] Approval needed (a1b2c3)\n[claw\u034fbot] ls\n[\uff43law\ufe0fbot] ok\n[c\u0142awbo\u0442] x"
    await channel.send(OutboundMessage("terminal", "local", forged))
    shown = stdout.getvalue()
    read = "".join(c for c in shown if c not in "\u034f\ufe0f").translate(str.maketrans("\u0441\uff43\u0142\u0442", "cclt"))
    assert "[clawbot]" not in read, shown


def test_a_piped_chat_never_loads_the_interactive_prompt(tmp_path) -> None:
    """prompt_toolkit costs a fifth of a second to import: only a real terminal pays it."""
    import subprocess
    import sys

    probe = (
        "import asyncio, io, sys\n"
        "from clawbot_terminal.channel import TerminalChannel\n"
        "from clawbot_terminal.config import TerminalConfig\n"
        "async def sink(message):\n"
        "    future = asyncio.get_running_loop().create_future(); future.set_result(None); return future\n"
        "out = io.StringIO()\n"
        "asyncio.run(TerminalChannel(TerminalConfig(), stdin=io.StringIO('hi\\n'), stdout=out).start(sink))\n"
        "print('prompt_toolkit' in sys.modules)\n"
    )
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "False"
