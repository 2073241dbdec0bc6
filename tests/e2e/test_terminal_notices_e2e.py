"""On the terminal, a reply cannot redraw the screen or pass for clawbot's approval notice.

The real terminal channel, the real gateway, the Anthropic SDK on the fake LLM server. The
model first asks for an approval (the kernel's notice is printed), then replies with an
imitation of that notice copied byte for byte from the screen, led by escape sequences that
would move the cursor up and erase the real one.
"""

from __future__ import annotations

import asyncio
import io

import pytest
from clawbot import OutboundMessage
from clawbot.agent.models import ModelChoice
from clawbot.agent.runtime import AgentRuntime
from clawbot.gateway.runner import Gateway
from clawbot.testing import plugin_from_hooks
from clawbot.testing.fake_llm import ToolCallSpec
from clawbot_terminal.channel import TerminalChannel
from clawbot_terminal.config import TerminalConfig

from ..gateway.chatkit import guarded_tool
from .e2etools import MODEL, make_provider

MARK = OutboundMessage.NOTICE_MARK
ERASE = "\x1b[3A\x1b[J\r"  # cursor up three lines, erase to the end of the screen


class _Screen(io.StringIO):
    def __init__(self, tty: bool) -> None:
        super().__init__()
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


def _blocks(output: str) -> tuple[list[str], list[str]]:
    """The screen's lines: those of the first notice, and everything after the model's 'ok'
    (a terminal also shows the tool call, as a dim line of its own: left out here)."""
    lines = [line for line in output.split("\n") if "\u2699 guarded" not in line]
    split = lines.index("ok")
    return lines[:split], lines[split + 1 :]


@pytest.mark.parametrize("tty", [False, True], ids=["piped", "terminal"])
async def test_a_reply_imitating_the_approval_notice_byte_for_byte_renders_differently(make_kernel, fake_llm, monkeypatch, tty) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    screen = _Screen(tty)

    def imitation(request) -> str:  # what the screen showed for the real notice, and the erase
        shown, _ = _blocks(screen.getvalue() + "\nok")
        return ERASE + "\n".join(line.replace("launch --rocket", "rm -rf ~") for line in shown if line)

    fake_llm.reply(tool_calls=[ToolCallSpec("guarded", {})])
    fake_llm.reply("ok")
    fake_llm.queue(imitation)
    kernel = await make_kernel(plugins={"t": plugin_from_hooks(clawbot_tools=lambda ctx: [guarded_tool([])])})
    provider = make_provider("anthropic", fake_llm)
    runtime = AgentRuntime(kernel)
    await runtime.conversation("main", chain=[ModelChoice(provider, MODEL["anthropic"])])
    channel = TerminalChannel(TerminalConfig(), stdin=io.StringIO("launch\nwhat now?\n"), stdout=screen)
    gateway = Gateway(kernel, runtime.respond, "main", runtime=runtime)
    await asyncio.wait_for(gateway.run([channel]), 30)
    await runtime.aclose()
    await provider.aclose()

    real, reply = _blocks(screen.getvalue())
    real, reply = [line for line in real if line], [line for line in reply if line]
    assert real[0].startswith(f"\x1b[1;36m{MARK} Approval needed" if tty else f"{MARK} Approval needed")
    assert all(MARK in line for line in real)  # every line of clawbot's notice carries the mark
    assert "\x1b" not in "".join(reply) and "\r" not in "".join(reply)  # nothing moved the cursor
    assert reply[0].startswith("\\u001b[3A\\u001b[J\\u000d")  # the attempt is shown, not performed
    assert not any(line.startswith(MARK) or MARK in line for line in reply)
    assert [line.replace("rm -rf ~", "launch --rocket") for line in reply] != real
    assert len(fake_llm.requests) == 3
