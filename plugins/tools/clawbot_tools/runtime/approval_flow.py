"""Asking the user before ``exec`` runs a command, and acting on the answer.

Asking never blocks the turn: the request goes to ``ToolServices.request_approval`` and
``exec`` returns an "approval-pending" result at once, which shows the exact command, the
reason and the ``/approve`` line the model must relay (seed 004). The answer arrives later,
outside the turn, in :func:`on_decision`:

* allow-once: the exact command stored here runs once (same directory, environment and
  timeout) as a background process, and a system event reports how it ended;
* allow-always: the same, after remembering its executables for this agent: from then on
  they run with *any* arguments without asking (the notice says so plainly). It is offered
  only when the policy says so (``Verdict.allow_always``): never for destructive commands,
  lines the analysis could not pin down, programs inside the workspace, or programs that
  run whatever their arguments, input or configuration say (shells, interpreters, ``env``,
  ``xargs``, ``find``, ``git``, ``make``, ``awk``, ``sed``, ``ssh``, ``curl``, compilers,
  pagers, editors, package managers, ``docker``, ``taskset``, ``sqlite3`` ... see
  ``exec_policy.NEVER_ALWAYS``), which are allowed once only;
* deny / expired: nothing runs (logged only: the user already saw "Denied", and an
  unprompted turn half an hour later about an expired request helps nobody).
"""

from __future__ import annotations

import asyncio
import logging
from datetime import UTC, datetime

from clawbot import ToolCall, ToolResult
from clawbot.types import (
    ApprovalDecision,
    ApprovalRequest,
    ApprovalTicket,
    ServiceUnavailable,
    ToolServices,
)

from clawbot_tools.runtime.context import Job, RuntimeContext
from clawbot_tools.runtime.exec_policy import Verdict
from clawbot_tools.runtime.reports import event_text

log = logging.getLogger(__name__)


def ask(call: ToolCall, rt: RuntimeContext, job: Job, verdict: Verdict) -> ToolResult:
    services = call.services
    always = verdict.allow_always and rt.store.available
    if services is None:
        return unavailable(job, verdict, "this tool call runs outside a chat")
    request = ApprovalRequest(
        tool_name="exec",
        command=job.command,
        reason="; ".join(verdict.reasons),
        on_decision=lambda decision: on_decision(decision, rt, job, verdict, services),
        allow_always=always,
        expires_in_s=float(rt.exec.approval_expiry_s),
    )
    try:
        ticket = services.request_approval(request)
    except ServiceUnavailable as exc:
        return unavailable(job, verdict, str(exc))
    return pending(ticket, job, verdict, allow_always=always)


def pending(ticket: ApprovalTicket, job: Job, verdict: Verdict, *, allow_always: bool) -> ToolResult:
    """The "approval-pending" result the model relays to the user."""
    lines = ["Approval required (approval-pending): this command has NOT run yet.", "Command:", job.command, ""]
    lines += _reasons(verdict)
    lines.append(f"Expires: {_when(ticket.expires_at)}")
    lines.append(f"Reply with: {ticket.reply_with}")
    other = []
    if allow_always:
        programs = ", ".join(p.real for p in verdict.programs)
        other.append(
            f"/approve {ticket.id} allow-always (runs it, and from now on lets {programs} run for this agent "
            "with any arguments, without asking)"
        )
    other.append(f"/deny {ticket.id} (do not run it)")
    lines.append("Other answers: " + "; ".join(other) + ".")
    lines.append("Once approved, it runs in the background and its result comes back to you as a system event.")
    return ToolResult.text(
        "\n".join(lines),
        status="approval-pending",
        approval_id=ticket.id,
        command=job.command,
        reasons=list(verdict.reasons),
        expires_at=ticket.expires_at.isoformat(),
        allow_always=allow_always,
    )


def unavailable(job: Job, verdict: Verdict, why: str) -> ToolResult:
    lines = [f"exec: this command needs the user's approval, but approvals are not available in this run ({why}). Nothing ran.", "Command:", job.command, ""]
    lines += _reasons(verdict)
    if verdict.destructive:
        lines.append("Destructive commands always need approval: ask the user to run it from a chat, or run it themselves.")
    else:
        example = ", ".join(f'"{p.real}"' for p in verdict.programs) or '"/usr/bin/tool"'
        lines.append(
            "To allow it without asking, the user can add its programs to [plugins.tools.exec] allowlist in "
            f"clawbot.toml (for example allowlist = [{example}]), or run it from a chat to approve it there."
        )
    return ToolResult.error("\n".join(lines), status="approval-unavailable", command=job.command, reasons=list(verdict.reasons))


def _reasons(verdict: Verdict) -> list[str]:
    if len(verdict.reasons) == 1:
        return [f"Reason: {verdict.reasons[0]}"]
    return ["Reasons:", *(f"- {reason}" for reason in verdict.reasons)]


def _when(expires_at: datetime) -> str:
    minutes = max(0, round((expires_at - datetime.now(UTC)).total_seconds() / 60))
    return f"{expires_at.astimezone(UTC):%Y-%m-%d %H:%M} UTC (in {minutes} min)"


async def on_decision(decision: ApprovalDecision, rt: RuntimeContext, job: Job, verdict: Verdict, services: ToolServices) -> None:
    if decision in (ApprovalDecision.DENY, ApprovalDecision.EXPIRED):
        log.info("exec approval for agent %s: %s; nothing ran", job.agent_id, decision.value)
        return
    if decision is ApprovalDecision.ALLOW_ALWAYS and verdict.allow_always and verdict.programs:
        await asyncio.to_thread(rt.store.add, job.agent_id, verdict.programs)
    try:
        process = await rt.registry.start(
            job.command, cwd=job.cwd, env=dict(job.env), timeout_s=job.timeout_s,
            session_key=job.session_key, agent_id=job.agent_id,
        )
    except (OSError, RuntimeError) as exc:
        await post(services, f"exec: the approved command could not start: {exc}\nCommand: {job.command}")
        return
    process.backgrounded = True
    await process.wait(None)
    await post(services, event_text(process, rt.secrets, approved=True))


async def post(services: ToolServices, text: str) -> None:
    try:
        await services.post_system_event(text)
    except ServiceUnavailable as exc:
        log.info("exec could not report back: %s", exc)
