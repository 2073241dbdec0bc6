"""Pending approvals: a tool asks, the user answers ``/approve <id>`` in the same chat.

Asking never blocks the turn (seed 004: the tool returns "approval-pending" and the model
relays the exact ``/approve`` command). The decision, or expiry, runs the request's
``on_decision`` in a background task owned by the broker, so it survives the turn that
asked and is cancelled when the runtime closes. Only the session that asked can answer:
an id typed in another chat is "unknown", which also keeps ids from being probed.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from datetime import UTC, datetime, timedelta

import attrs

from clawbot.types import ApprovalDecision, ApprovalRequest, ApprovalTicket

log = logging.getLogger(__name__)

DECISION_WORDS: dict[str, ApprovalDecision] = {
    "": ApprovalDecision.ALLOW_ONCE,
    "once": ApprovalDecision.ALLOW_ONCE,
    "allow-once": ApprovalDecision.ALLOW_ONCE,
    "always": ApprovalDecision.ALLOW_ALWAYS,
    "allow-always": ApprovalDecision.ALLOW_ALWAYS,
    "deny": ApprovalDecision.DENY,
}


@attrs.define
class _Pending:
    ticket: ApprovalTicket
    request: ApprovalRequest
    session_key: str
    timer: asyncio.TimerHandle | None = None


@attrs.define
class ApprovalBroker:
    _pending: dict[str, _Pending] = attrs.field(factory=dict)
    _tasks: set[asyncio.Task[None]] = attrs.field(factory=set)

    def register(self, session_key: str, request: ApprovalRequest) -> ApprovalTicket:
        approval_id = secrets.token_hex(3)
        while approval_id in self._pending:
            approval_id = secrets.token_hex(3)
        expires_at = datetime.now(UTC) + timedelta(seconds=request.expires_in_s)
        ticket = ApprovalTicket(approval_id, expires_at, f"/approve {approval_id} allow-once")
        pending = _Pending(ticket, request, session_key)
        pending.timer = asyncio.get_running_loop().call_later(
            request.expires_in_s, self._decide, approval_id, ApprovalDecision.EXPIRED
        )
        self._pending[approval_id] = pending
        return ticket

    def pending_for(self, session_key: str) -> list[ApprovalTicket]:
        return [p.ticket for p in self._pending.values() if p.session_key == session_key]

    def answer(self, session_key: str, approval_id: str, decision: ApprovalDecision) -> tuple[str, bool]:
        """Check the user's decision: (what to tell them, whether it was accepted).

        Accepting does not act yet: the caller shows the confirmation first, then calls
        :meth:`decide`, so the user reads "Approved" before the action's own report.
        """
        pending = self._pending.get(approval_id)
        if pending is None or pending.session_key != session_key:
            return f"No pending approval {approval_id!r} here (it may have expired or been answered already).", False
        if decision is ApprovalDecision.ALLOW_ALWAYS and not pending.request.allow_always:
            return (
                f"{pending.request.tool_name} cannot be allowed always for this command "
                f"({pending.request.reason}). Send /approve {approval_id} allow-once to run it this one time."
            ), False
        return self._confirmation(pending, decision), True

    @staticmethod
    def _confirmation(pending: _Pending, decision: ApprovalDecision) -> str:
        command = pending.request.command
        if decision is ApprovalDecision.DENY:
            return f"Denied; {pending.request.tool_name} will not run:\n{command}"
        scope = "always" if decision is ApprovalDecision.ALLOW_ALWAYS else "once"
        return f"Approved ({scope}); {pending.request.tool_name} is running:\n{command}"

    def decide(self, approval_id: str, decision: ApprovalDecision) -> None:
        """Act on ``decision`` in the background (nothing happens if it expired meanwhile)."""
        self._decide(approval_id, decision)

    def _decide(self, approval_id: str, decision: ApprovalDecision) -> None:
        pending = self._pending.pop(approval_id, None)
        if pending is None:
            return
        if pending.timer is not None:
            pending.timer.cancel()
        task = asyncio.get_running_loop().create_task(
            self._run(pending, decision), name=f"approval:{approval_id}:{decision.value}"
        )
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    @staticmethod
    async def _run(pending: _Pending, decision: ApprovalDecision) -> None:
        try:
            await pending.request.on_decision(decision)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("acting on approval %s (%s) failed", pending.ticket.id, decision.value)

    async def aclose(self) -> None:
        """Forget what is pending and cancel decisions still running."""
        for pending in self._pending.values():
            if pending.timer is not None:
                pending.timer.cancel()
        self._pending.clear()
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def drain(self) -> None:
        """Wait for the decisions already taken to finish acting (tests, orderly shutdown)."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)
