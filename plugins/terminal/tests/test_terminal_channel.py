"""The terminal channel: lines in, replies out, end of input ends the chat."""

from __future__ import annotations

import io

from clawbot.gateway.runner import Gateway
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

    await Gateway(kernel, respond, "main").run([channel])  # returns at end of input
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
    from clawbot.gateway.runner import enabled_channels

    kernel = await make_kernel(plugins={"terminal": plugin}, config='[channels.terminal]\nenabled = false\nprompt = "> "\n')
    assert enabled_channels(kernel) == []
    assert kernel.config.section("channels.terminal").prompt == "> "
