"""Asking the owner before ``exec`` runs a command, and acting on the answer.

Asking never blocks the turn: the request goes to ``ToolServices.request_approval`` and
``exec`` returns an "approval-pending" result at once, which shows the exact command, the
reason and the ``/approve`` line the model must relay. The kernel shows the
owner its own notice with the command and :func:`grant_lines`: where it runs (inside the
sandbox, with network, or outside it), what it may write and read there beyond the
workspace (``sandbox_write``, ``sandbox_read``, the agent's skills), the environment the
model adds, and whether it may read input. A turn started by someone who may not approve is refused at once
(``ApprovalRefused``): nothing is left pending for a stranger's command.

The answer arrives later, outside the turn, in :func:`on_decision`. When a file the
command runs changed after the owner was asked (the turn went on and rewrote it), an
allow answer runs nothing, remembers nothing, and a system event says what changed.

* allow-once: the exact job stored here runs once (same directory, environment, grants
  and timeout) as a background process, and a system event reports how it ended. Its input
  is ``/dev/null`` unless the approval was for an interactive command; writing to an
  interactive one asks again each time (:mod:`~clawbot_tools.runtime.process`);
* allow-always: the same, after remembering what the notice said it would
  (``Verdict.always``): the programs, when each runs no code from its arguments
  (``exec_policy.ALWAYS_OK``), or else this exact command with its grants and the files
  it runs as they were when the owner was asked (:mod:`~clawbot_tools.runtime.bound_files`;
  a changed file asks again);
* the files are compared once more right before the command starts (the remembering is
  awaited in between); a change there runs nothing either. An approved command starts with
  ``PYTHONDONTWRITEBYTECODE=1``: the bytecode cache it would write beside the modules it
  runs is bound too, and would make the next run ask again;
* deny / expired: nothing runs (logged only: the user already saw "Denied", and an
  unprompted turn half an hour later about an expired request helps nobody).
"""

from __future__ import annotations

import asyncio
import logging
from datetime import UTC, datetime

import attrs
from clawbot import ToolCall, ToolResult
from clawbot.safetext import visible
from clawbot.types import (
    ApprovalDecision,
    ApprovalRefused,
    ApprovalRequest,
    ApprovalTicket,
    ServiceUnavailable,
    ToolServices,
)

from clawbot_tools.runtime.bound_files import Binding
from clawbot_tools.runtime.context import Job, RuntimeContext
from clawbot_tools.runtime.exec_policy import Verdict
from clawbot_tools.runtime.processes import ManagedProcess
from clawbot_tools.runtime.remembered_commands import binding_of, changed_since
from clawbot_tools.runtime.reports import event_text

log = logging.getLogger(__name__)

# what every approved command gets in its environment (see the module's docstring)
APPROVED_ENV = {"PYTHONDONTWRITEBYTECODE": "1"}


class FilesChanged(Exception):
    """A file an approved command runs changed after it was checked; ``str(exc)`` says which."""


def with_grants(verdict: Verdict, job: Job, mechanism: str) -> Verdict:
    """``verdict`` for a job that asks for more than the sandbox gives: it always asks, and
    "always" can only remember the exact command (with its grants)."""
    reasons = list(verdict.reasons if verdict.action == "ask" else ())
    if not job.sandboxed:
        reasons.append(f"asks to run outside the sandbox ({mechanism}), with your full access")
    elif job.network:
        reasons.append("asks for network access")
    always = None if verdict.destructive or (verdict.action == "ask" and verdict.always is None) else "command"
    return attrs.evolve(verdict, action="ask", reasons=tuple(reasons), always=always)


@attrs.frozen
class Reach:
    """What a sandboxed command may touch beyond the workspace and its temp dir: the trees
    ``sandbox_read`` and ``sandbox_write`` open (real paths), and the agent's skills."""

    reads: tuple[str, ...] = ()
    writes: tuple[str, ...] = ()


def _trees(paths: tuple[str, ...], key: str) -> str:
    return f"{', '.join(paths)} ({key})"


def grant_lines(job: Job, mechanism: str, reach: Reach = Reach()) -> tuple[str, ...]:
    """What approving ``job`` lets it do, in the words of the notice: every grant it holds
    (outside the sandbox, network, each extra tree it may write or read, interactive input)
    is named, a line each, so a long list of trees never pushes another grant out of sight."""
    if not job.sandboxed:
        lines = ["Runs: OUTSIDE the sandbox: it can read and change all your files, and use the network."]
    elif mechanism == "off":
        lines = ["Runs: without a sandbox (none is usable here): it can read and change all your files, and use the network."]
    else:
        lines = [f"Runs: inside the sandbox ({mechanism}), {'with network access' if job.network else 'with no network'}."]
        if reach.writes:
            lines.append(f"Writes: the workspace, its temp dir and {_trees(reach.writes, 'sandbox_write')}.")
        else:
            lines.append("Writes: only the workspace and its temp dir.")
        reads = [_trees(reach.reads, "sandbox_read")] if reach.reads else []
        if job.readable:
            reads.append("the agent's skills")
        if reads:
            lines.append(f"Reads also: {' and '.join(reads)}.")
    lines.append(f"Directory: {job.cwd}")
    if job.added_env:
        lines.append("Environment it adds: " + " ".join(f"{k}={v}" for k, v in sorted(job.added_env.items())))
    # its input is /dev/null unless this grant says otherwise
    if job.interactive:
        lines.append("Input: interactive: each text the agent sends to it asks you again.")
    return tuple(lines)


def withheld_lines(verdict: Verdict) -> tuple[str, ...]:
    """Why the notice offers no "allow-always" where the gate alone would have."""
    return (f"No allow-always: {verdict.withheld}.",) if verdict.withheld else ()


def always_covers(verdict: Verdict, mechanism: str, binding: Binding) -> str | None:
    if verdict.always == "programs":
        programs = ", ".join(p.real for p in verdict.programs)
        # a later run of these programs gets what the Writes and Reads lines above name, never the network
        return f"{programs} with any arguments, inside the sandbox ({mechanism}) as above, without network"
    if verdict.always == "command" and binding.files:  # short: the notice shows one line of it
        return "this exact command in this directory, same environment and grants, until a file it runs changes"
    if verdict.always == "command":
        return "this exact command, in this directory, with the same environment and the same grants"
    return None


def ask(call: ToolCall, rt: RuntimeContext, job: Job, verdict: Verdict, binding: Binding) -> ToolResult:
    services = call.services
    always = verdict.allow_always and rt.store.available
    if services is None:
        return unavailable(job, verdict, "this tool call runs outside a chat")
    mechanism = rt.sandbox.choice().mechanism.name
    reach = Reach(rt.sandbox.extra_reads(), rt.sandbox.extra_writes())
    request = ApprovalRequest(
        tool_name="exec",
        command=job.command,
        reason="; ".join(verdict.reasons),
        on_decision=lambda decision: on_decision(decision, rt, job, verdict, services, binding),
        allow_always=always,
        expires_in_s=float(rt.exec.approval_expiry_s),
        details=grant_lines(job, mechanism, reach) + withheld_lines(verdict),
        always_covers=always_covers(verdict, mechanism, binding) if always else None,
    )
    try:
        ticket = services.request_approval(request)
    except ApprovalRefused as exc:
        return ToolResult.error(
            f"exec: this command needs the owner's approval, and this request cannot get it: {exc}. Nothing ran.",
            status="refused",
            command=job.command,
            reasons=list(verdict.reasons),
        )
    except ServiceUnavailable as exc:
        return unavailable(job, verdict, str(exc))
    return pending(ticket, job, verdict, allow_always=always, grants=request.details, covers=request.always_covers)


def pending(
    ticket: ApprovalTicket,
    job: Job,
    verdict: Verdict,
    *,
    allow_always: bool,
    grants: tuple[str, ...] = (),
    covers: str | None = None,
) -> ToolResult:
    """The "approval-pending" result the model relays to the user."""
    lines = ["Approval required (approval-pending): this command has NOT run yet.", "Command:", job.command, ""]
    lines += _reasons(verdict)
    lines += grants
    lines.append(f"Expires: {_when(ticket.expires_at)}")
    lines.append(f"Reply with: {ticket.reply_with}")
    other = []
    if allow_always:
        other.append(f"/approve {ticket.id} allow-always (runs it, and from now on lets {covers} run for this agent without asking)")
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
    if verdict.destructive or job.grants:
        lines.append("Ask the user to run it from a chat, where they can approve it, or to run it themselves.")
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


async def on_decision(decision: ApprovalDecision, rt: RuntimeContext, job: Job, verdict: Verdict, services: ToolServices, binding: Binding) -> None:
    if decision in (ApprovalDecision.DENY, ApprovalDecision.EXPIRED):
        log.info("exec approval for agent %s: %s; nothing ran", job.agent_id, decision.value)
        return
    changed = changed_since(binding, await asyncio.to_thread(binding_of, rt, job), job.cwd)
    if changed is not None:  # the owner approved the files as they were when asked
        why = f"since you were asked, {visible(changed)}. Ask again to run it as it is now"
        await post(services, f"exec: the approved command did not run: {why}.\nCommand: {visible(job.command)}")
        return
    if decision is ApprovalDecision.ALLOW_ALWAYS and verdict.allow_always:
        if verdict.always == "programs" and verdict.programs:
            await asyncio.to_thread(rt.store.add, job.agent_id, verdict.programs)
        elif verdict.always == "command":
            key = job.remembered_as(rt.sandbox.choice().mechanism.name)
            await asyncio.to_thread(rt.store.add_command, job.agent_id, key, binding.files)
    try:
        process = await start_job(rt, job, approved=True, bound=binding)
    except FilesChanged as exc:
        why = f"since you were asked, {visible(str(exc))}. Ask again to run it as it is now"
        await post(services, f"exec: the approved command did not run: {why}.\nCommand: {visible(job.command)}")
        return
    except Exception as exc:  # the owner must hear why their approved command did not run
        await post(services, f"exec: the approved command could not start: {visible(str(exc))}\nCommand: {visible(job.command)}")
        return
    process.backgrounded = True
    await process.wait(None)
    await post(services, event_text(process, rt.secrets, approved=True))


async def start_job(rt: RuntimeContext, job: Job, *, approved: bool, bound: Binding | None = None) -> ManagedProcess:
    """The one way exec starts a command. ``approved``: an approval covers it, given now or
    remembered ("allow always"): it gets /dev/null as input unless the approval said
    interactive, and each text sent to it later asks again. A command the gate let run
    unasked keeps an open input. ``bound``: the files the approval covers, compared again
    right before it starts (``FilesChanged`` when one differs)."""
    if bound is not None:
        changed = changed_since(bound, await asyncio.to_thread(binding_of, rt, job), job.cwd)
        if changed is not None:
            raise FilesChanged(changed)
    if approved:
        job = attrs.evolve(job, env={**job.env, **APPROVED_ENV})
    return await rt.registry.start(
        job.command,
        lambda: rt.sandbox.prepare(job),
        timeout_s=job.timeout_s,
        session_key=job.session_key,
        agent_id=job.agent_id,
        approved=approved,
        interactive=job.interactive if approved else True,
        trust=job.trust,
    )


async def post(services: ToolServices, text: str) -> None:
    try:
        await services.post_system_event(text)
    except ServiceUnavailable as exc:
        log.info("exec could not report back: %s", exc)
