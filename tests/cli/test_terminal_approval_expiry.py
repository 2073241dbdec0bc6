"""An approval left unanswered at the terminal expires, and its question goes by itself.

The real prompt of ``clawbot run`` draws on a real pty (in this process, so the expiry can
be set off by the test instead of after the ten seconds the exec tool's config allows at least); what waits comes
from a real approval broker, as in the gateway. With nothing typed, the expired question
gives way to the next one waiting, and the last to the plain prompt.
"""

from __future__ import annotations

import asyncio
import os

from clawbot.agent.approvals import ApprovalBroker, offer
from clawbot.types import ApprovalDecision, ApprovalRequest
from clawbot_terminal.prompt import PromptScreen, Quit

from .ptyterm import PtyScreen

SESSION = "agent:main:main"


async def test_an_expired_approval_drops_out_of_the_question_with_nothing_typed() -> None:
    broker = ApprovalBroker()
    decided: list[ApprovalDecision] = []
    answered: list[str] = []

    async def on_decision(decision: ApprovalDecision) -> None:
        decided.append(decision)

    master, slave = PtyScreen.open()
    term = PtyScreen(master)
    stdin, stdout = os.fdopen(slave, "r", closefd=False), os.fdopen(os.dup(slave), "w")
    prompt = PromptScreen(
        "you> ",
        stdin,
        stdout,
        None,
        on_ctrl_c=lambda: None,
        on_answer=lambda offered, choice: answered.append(choice),
        busy=lambda: False,
        waiting=lambda: frozenset(ticket.id for ticket in broker.pending_for(SESSION)),
    )
    reading = asyncio.create_task(prompt.read())
    try:
        await asyncio.to_thread(term.wait_for_prompt)
        for command in ("touch DANGEROUS.txt", "touch harmless.txt"):
            request = ApprovalRequest("exec", command, "not on the allowlist", on_decision, expires_in_s=600)
            prompt.offer(offer(broker.register(SESSION, request), request))
        first, second = (ticket.id for ticket in broker.pending_for(SESSION))
        await asyncio.to_thread(term.wait_for, f"approve {first} (exec: touch DANGEROUS.txt) (1 of 2)? [o]nce")
        broker._expire(first)  # what its timer does when the time is up; a busy machine cannot skip a screen
        screen = await asyncio.to_thread(term.wait_for, f"approve {second} (exec: touch harmless.txt)? [o]nce")
        assert "(1 of" not in screen and first not in screen
        broker._expire(second)
        await asyncio.to_thread(term.wait_for_prompt)
        term.type("\x04")
        assert isinstance(await asyncio.wait_for(reading, 30), Quit)
    finally:
        prompt.quit()
        await asyncio.gather(reading, return_exceptions=True)
        stdin.close()
        stdout.close()
        os.close(slave)
        term.close()
    await broker.drain()
    assert decided == [ApprovalDecision.EXPIRED, ApprovalDecision.EXPIRED] and answered == []
