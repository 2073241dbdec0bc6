"""One-shot turns of ``clawbot agent -m``: the terminal is the chat.

A :class:`~clawbot.agent.runtime.GatewayPort` for a process without a gateway. What a tool
sends to the chat is printed; a system event (an approved command finished) is queued and
answered in a follow-up turn, as a chat would get it. A command that needs approval is
asked about on the terminal after the turn when stdin is one (allow-once / allow-always /
deny; the question names the approval, the tool and the command, allow-always is a word,
never one letter; ``show`` prints the request in full, and a request whose notice leaves
something out cannot be allowed before it was shown); when stdin is a pipe or a file nobody can answer, so it is denied with a note.
Ctrl-C at the question leaves the approval unanswered: the command does not run.
"""

from __future__ import annotations

import asyncio
import functools
import os
import shutil
import sys
from collections.abc import Callable

import attrs

from clawbot.agent.approvals import NOTICE_HEAD, SHOW, notice_body, offer_summary, tool_label
from clawbot.agent.notices import cut_rows, outgoing_text, quoted_line
from clawbot.cli.output import echo
from clawbot.types import ApprovalDecision, ApprovalRequest, ApprovalTicket, InboundMessage, OutboundMessage

CHANNEL = "cli"
ANSWERS = {
    "o": ApprovalDecision.ALLOW_ONCE,
    "once": ApprovalDecision.ALLOW_ONCE,
    "allow-once": ApprovalDecision.ALLOW_ONCE,
    "y": ApprovalDecision.ALLOW_ONCE,
    "yes": ApprovalDecision.ALLOW_ONCE,
    "always": ApprovalDecision.ALLOW_ALWAYS,
    "allow-always": ApprovalDecision.ALLOW_ALWAYS,
    "d": ApprovalDecision.DENY,
    "deny": ApprovalDecision.DENY,
    "n": ApprovalDecision.DENY,
    "no": ApprovalDecision.DENY,
    "": ApprovalDecision.DENY,  # Enter alone: the safe answer
}


def local_user() -> InboundMessage:
    """The person who ran the command: the owner (they could run the command themselves)."""
    return InboundMessage(channel=CHANNEL, peer_id="local", text="", from_owner=True)


@attrs.define
class OneShotPort:
    events: list[str] = attrs.field(factory=list)
    _arrived: asyncio.Event = attrs.field(factory=asyncio.Event)

    def channel_names(self) -> list[str]:
        return [CHANNEL]

    async def deliver(self, message: OutboundMessage, session_key: str | None, *, notice: bool = False) -> bool:
        if notice and message.text.startswith(NOTICE_HEAD):
            return True  # asked on the terminal once the turn is over
        echo(outgoing_text(message.text, notice=notice), err=notice)
        return True

    def inject(self, origin: InboundMessage, session_key: str, text: str) -> None:
        self.events.append(text)
        self._arrived.set()

    async def next_events(self, count: int) -> list[str]:
        """Wait until ``count`` system events have arrived; take them."""
        while len(self.events) < count:
            self._arrived.clear()
            await self._arrived.wait()
        taken, self.events = self.events[:count], self.events[count:]
        return taken


async def _read_line(fd: int) -> str | None:
    """One line typed at the terminal, or None at end of input; cancellable (Ctrl-C)."""
    loop = asyncio.get_running_loop()
    ready: asyncio.Future[bytes] = loop.create_future()

    def readable() -> None:
        if not ready.done():
            try:
                ready.set_result(os.read(fd, 4096))
            except OSError:
                ready.set_result(b"")

    loop.add_reader(fd, readable)
    try:
        data = await ready
    finally:
        loop.remove_reader(fd)
    return data.decode("utf-8", "replace") if data else None


def _print_rows(text: str) -> None:
    """``text`` cut into rows of the terminal's width, continued rows marked: a long line of
    a command cannot be wrapped by the terminal into a row that reads as its own line."""
    columns = max(20, shutil.get_terminal_size().columns - 1)
    echo(outgoing_text("\n".join(row for line in text.split("\n") for row in cut_rows(line, columns)), notice=True), err=True)


async def ask(ticket: ApprovalTicket, request: ApprovalRequest, show: Callable[[], str]) -> ApprovalDecision:
    """Show the request as the chat notice does and read the answer from the terminal;
    ``show`` gives the request in full (and lets it be allowed)."""
    body, hidden = notice_body(request)
    lines = [f"Approval needed: {tool_label(request)} wants to run the command below", *body]
    if hidden:
        lines.append(f"{hidden:,} characters are hidden (\u27e8\u2026\u27e9): type {SHOW} to see it all; it cannot be allowed unseen.")
    _print_rows("\n".join(lines))
    choices = "[o]nce, always, [d]eny" if request.allow_always else "[o]nce, [d]eny"
    choices += f", {SHOW}" if hidden else ""
    # The question names what it allows: a notice longer than the screen has scrolled away.
    question = outgoing_text(f"Allow {ticket.id} ({offer_summary(request)})? {choices} (Enter: deny): ", notice=True)
    seen = False
    while True:
        sys.stderr.write(question)
        sys.stderr.flush()
        try:
            line = await _read_line(sys.stdin.fileno())
        except asyncio.CancelledError:  # Ctrl-C: the turn is over; only this answer is missing
            sys.stderr.write("\n")
            echo(f"interrupted; approval {ticket.id} is left unanswered: {quoted_line(request.tool_name)} did not run", err=True)
            raise SystemExit(130) from None
        if line is None:
            sys.stderr.write("\n")
            return ApprovalDecision.DENY
        word = line.strip().lower()
        if word == SHOW:
            _print_rows(show())
            seen = True
            continue
        decision = ANSWERS.get(word)
        if decision is ApprovalDecision.ALLOW_ALWAYS and not request.allow_always:
            decision = None
        if decision is not None and decision is not ApprovalDecision.DENY and hidden and not seen:
            echo(f"Not allowed yet: {hidden:,} characters of it are hidden. Type {SHOW} to see them first (or deny).", err=True)
            continue
        if decision is not None:
            return decision


async def settle_approvals(runtime, session_key: str, *, interactive: bool) -> int:  # noqa: ANN001 - AgentRuntime
    """Answer what the turn left waiting; returns how many commands now run (each reports back)."""
    running = 0
    for ticket, request in runtime.approvals.requests_for(session_key):
        if interactive:
            decision = await ask(ticket, request, functools.partial(runtime.approvals.show, session_key, ticket.id, by_owner=True))
        else:
            decision = ApprovalDecision.DENY
            echo(
                f"Denied: {quoted_line(request.tool_name)} needs approval to run {quoted_line(request.command)!r}, "
                "and stdin is not a terminal, so nobody can answer here. Run `clawbot agent` in a terminal "
                "to be asked, or ask from a chat.",
                err=True,
            )
        text, commit = runtime.approvals.answer(session_key, ticket.id, decision, by_owner=True)
        if interactive or commit is None:
            echo(outgoing_text(text, notice=True), err=True)
        if commit is not None:
            commit()
            running += decision is not ApprovalDecision.DENY
    return running
