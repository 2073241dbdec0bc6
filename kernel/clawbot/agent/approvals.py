"""Pending approvals: a tool asks, the owner answers ``/approve <id>`` in the same chat.

Asking never blocks the turn (the tool returns "approval-pending" and the model
relays the exact ``/approve`` command). The model's relay is not trusted, though: the kernel
itself sends the chat a notice with the exact command (control and bidi characters made
visible, the notice mark broken up, every line behind a gutter mark after the notice's own
lines), so a manipulated model cannot show ``ls`` for a pending ``rm -rf``, nor write
lines that read as the notice's "Why:" or "Reply /approve".

Who may answer: only the owner (:mod:`clawbot.agent.owners`), in the session that asked.
A turn started by anyone else never gets this far (``request_approval`` refuses at once),
and an answer from anyone else, or from another chat, is told the id is unknown, exactly
as for an id that never existed, so ids cannot be probed. Answering *claims* the request
atomically (a second answer finds nothing); the caller shows the confirmation and then
commits, so the user reads "Approved" before the action's own report, and an answer that
races the expiry cannot report "Approved" for something that will not run. The decision's
``on_decision`` runs in a background task owned by the broker, cancelled when the runtime
closes.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import attrs

from clawbot.agent.notices import LINE_WIDTH, fitted_block, fitted_line, full_block, quoted_block, quoted_line, summary
from clawbot.types import ApprovalDecision, ApprovalOffer, ApprovalRequest, ApprovalTicket, ServiceUnavailable

log = logging.getLogger(__name__)

MAX_PENDING_PER_SESSION = 20
DECISION_WORDS: dict[str, ApprovalDecision] = {
    "": ApprovalDecision.ALLOW_ONCE,
    "once": ApprovalDecision.ALLOW_ONCE,
    "allow-once": ApprovalDecision.ALLOW_ONCE,
    "always": ApprovalDecision.ALLOW_ALWAYS,
    "allow-always": ApprovalDecision.ALLOW_ALWAYS,
    "deny": ApprovalDecision.DENY,
}


#: how every approval notice begins (a one-shot terminal run asks in its own words instead)
NOTICE_HEAD = "Approval needed ("
#: the word that shows a pending request in full (``/approve <id> show``, or alone at a terminal's question)
SHOW = "show"
# Grants past this many are counted, not listed: the notice must fit a screen.
MAX_DETAILS = 5
TOOL_WIDTH = 40


def offer(ticket: ApprovalTicket, request: ApprovalRequest) -> ApprovalOffer:
    """The answers the notice offers, for channels that show them as buttons or keys
    (``show`` among them when the notice leaves something out: it must be seen first)."""
    always = (ApprovalDecision.ALLOW_ALWAYS.value,) if request.allow_always else ()
    show = (SHOW,) if notice_body(request)[1] else ()
    choices = (ApprovalDecision.ALLOW_ONCE.value, *always, ApprovalDecision.DENY.value, *show)
    return ApprovalOffer(ticket.id, choices, offer_summary(request))


def offer_summary(request: ApprovalRequest) -> str:
    """What is asked about, on one short line (``exec: rm -rf build``), for a question that
    must name it: the notice above may have scrolled away, or be another one."""
    return f"{summary(request.tool_name, 24)}: {summary(request.command)}"


def tool_label(request: ApprovalRequest) -> str:
    return fitted_line(request.tool_name, TOOL_WIDTH)[0]


def notice_body(request: ApprovalRequest) -> tuple[list[str], int]:
    """The notice's lines about ``request`` (why, what it grants, the command), each cut to
    a screen's width, and how many characters they leave out (``/approve <id> show`` shows them)."""
    hidden = fitted_line(request.tool_name, TOOL_WIDTH)[1]  # the header's share

    def fit(label: str, text: str) -> str:
        nonlocal hidden
        shown, left = fitted_line(text, LINE_WIDTH - len(label))
        hidden += left
        return label + shown

    lines = [fit("Why: ", request.reason)]
    details = list(request.details)
    if len(details) > MAX_DETAILS:
        kept, rest = details[: MAX_DETAILS - 1], details[MAX_DETAILS - 1 :]
        hidden += sum(len(detail) + 1 for detail in rest)
        lines += [fit("", detail) for detail in kept]
        lines.append(f"({len(rest)} more lines about what it grants are not shown)")
    else:
        lines += [fit("", detail) for detail in details]
    if request.allow_always and request.always_covers:
        lines.append(fit("allow-always also remembers: ", request.always_covers))
    block, left = fitted_block(request.command)
    lines.append(block)
    return lines, hidden + left


def notice_text(ticket: ApprovalTicket, request: ApprovalRequest) -> str:
    """What the chat is told when a tool asks (sent by the kernel, not the model)."""
    body, hidden = notice_body(request)
    # clawbot's own lines first, then the command behind a gutter (no line of it can pass
    # for "Why:" or "Reply /approve"), then the answer line.
    lines = [f"{NOTICE_HEAD}{ticket.id}): {tool_label(request)} wants to run the command below", *body]
    if hidden:
        lines.append(
            f"{hidden:,} characters are hidden (\u27e8\u2026\u27e9): /approve {ticket.id} {SHOW} (at the terminal's "
            f"question: {SHOW}) shows it all, and it cannot be allowed unseen."
        )
    minutes = max(1, round(request.expires_in_s / 60))
    lines.append(f"Reply {_options(ticket, request)}. Expires in {minutes} min.")
    return "\n".join(lines)


def _options(ticket: ApprovalTicket, request: ApprovalRequest) -> str:
    options = [f"/approve {ticket.id} allow-once"]
    if request.allow_always:
        options.append(f"/approve {ticket.id} allow-always")
    options.append(f"/deny {ticket.id}")
    return " or ".join(options)


def full_text(ticket: ApprovalTicket, request: ApprovalRequest) -> str:
    """The request with nothing left out: every line made visible, the command behind the gutter."""
    command = request.command
    count = command.count("\n") + 1
    size = f"{count} line{'s' if count > 1 else ''}, {len(command):,} characters"
    lines = [
        f"Approval {ticket.id} in full: {quoted_line(request.tool_name)} wants to run this command ({size})",
        f"Why: {quoted_line(request.reason)}",
        *(quoted_line(detail) for detail in request.details),
    ]
    if request.allow_always and request.always_covers:
        lines.append(f"allow-always also remembers: {quoted_line(request.always_covers)}")
    lines.append(full_block(command))
    lines.append(f"That is all of approval {ticket.id}.")
    return "\n".join(lines)


@attrs.define
class _Pending:
    ticket: ApprovalTicket
    request: ApprovalRequest
    session_key: str
    timer: asyncio.TimerHandle | None = None
    hidden: int = 0  # characters its notice leaves out: allowing it needs them seen first
    seen: bool = False


@attrs.define
class ApprovalBroker:
    _pending: dict[str, _Pending] = attrs.field(factory=dict)
    _tasks: set[asyncio.Task[None]] = attrs.field(factory=set)

    def register(self, session_key: str, request: ApprovalRequest) -> ApprovalTicket:
        """Add a pending request that the owner may answer in ``session_key``."""
        if sum(p.session_key == session_key for p in self._pending.values()) >= MAX_PENDING_PER_SESSION:
            raise ServiceUnavailable(f"{MAX_PENDING_PER_SESSION} approvals are already waiting in this chat; ask the user to answer or /deny them first")
        approval_id = secrets.token_hex(3)
        while approval_id in self._pending:
            approval_id = secrets.token_hex(3)
        expires_at = datetime.now(UTC) + timedelta(seconds=request.expires_in_s)
        ticket = ApprovalTicket(approval_id, expires_at, f"/approve {approval_id} allow-once")
        pending = _Pending(ticket, request, session_key, hidden=notice_body(request)[1])
        pending.timer = asyncio.get_running_loop().call_later(request.expires_in_s, self._expire, approval_id)
        self._pending[approval_id] = pending
        return ticket

    def waiting(self, session_key: str) -> list[str]:
        """One line per request waiting in ``session_key``: the id and the exact command."""
        return [
            f"{p.ticket.id}: {quoted_line(p.request.tool_name)}\n{quoted_block(p.request.command)}"
            for p in self._pending.values()
            if p.session_key == session_key
        ]

    def pending_for(self, session_key: str) -> list[ApprovalTicket]:
        return [p.ticket for p in self._pending.values() if p.session_key == session_key]

    def requests_for(self, session_key: str) -> list[tuple[ApprovalTicket, ApprovalRequest]]:
        """What waits in ``session_key``, with the requests (a terminal asks about each)."""
        return [(p.ticket, p.request) for p in self._pending.values() if p.session_key == session_key]

    def answer(
        self,
        session_key: str,
        approval_id: str,
        decision: ApprovalDecision,
        *,
        by_owner: bool,
    ) -> tuple[str, Callable[[], None] | None]:
        """Claim a request for the owner's decision: (what to tell them, commit or ``None``).

        ``by_owner`` says whether the answer comes from the owner; anyone else gets the
        answer an unknown id gets. The claim removes the request at once; ``commit()``
        starts acting on it.
        """
        pending = self._pending.get(approval_id)
        if pending is None or pending.session_key != session_key or not by_owner:
            return self._unknown(approval_id), None
        if decision is ApprovalDecision.ALLOW_ALWAYS and not pending.request.allow_always:
            return (
                f"{quoted_line(pending.request.tool_name)} cannot be allowed always for this command "
                f"({quoted_line(pending.request.reason)}). Send /approve {approval_id} allow-once to run it this one time."
            ), None
        if decision is not ApprovalDecision.DENY and pending.hidden and not pending.seen:
            return (
                f"Not allowed yet: the notice of {approval_id} hides {pending.hidden:,} characters of what would run. "
                f"See them first: /approve {approval_id} {SHOW} (at the terminal's question: {SHOW}), then answer again; "
                f"/deny {approval_id} refuses it unseen."
            ), None
        claimed = self._claim(approval_id)
        assert claimed is not None
        return self._confirmation(claimed, decision), lambda: self._act(claimed, decision)

    def show(self, session_key: str, approval_id: str, *, by_owner: bool) -> str:
        """The request in full, for the owner; from then on it may be allowed."""
        pending = self._pending.get(approval_id)
        if pending is None or pending.session_key != session_key or not by_owner:
            return self._unknown(approval_id)
        pending.seen = True
        return full_text(pending.ticket, pending.request)

    @staticmethod
    def _unknown(approval_id: str) -> str:
        return f"No pending approval {quoted_line(approval_id)!r} here (it may have expired or been answered already)."

    @staticmethod
    def _confirmation(pending: _Pending, decision: ApprovalDecision) -> str:
        command, tool = quoted_block(pending.request.command), quoted_line(pending.request.tool_name)
        if decision is ApprovalDecision.DENY:
            return f"Denied; {tool} will not run:\n{command}"
        scope = "always" if decision is ApprovalDecision.ALLOW_ALWAYS else "once"
        return f"Approved ({scope}); {tool} is running:\n{command}"

    def _claim(self, approval_id: str) -> _Pending | None:
        pending = self._pending.pop(approval_id, None)
        if pending is not None and pending.timer is not None:
            pending.timer.cancel()
        return pending

    def _expire(self, approval_id: str) -> None:
        pending = self._claim(approval_id)
        if pending is not None:
            self._act(pending, ApprovalDecision.EXPIRED)

    def _act(self, pending: _Pending, decision: ApprovalDecision) -> None:
        task = asyncio.get_running_loop().create_task(self._run(pending, decision), name=f"approval:{pending.ticket.id}:{decision.value}")
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
