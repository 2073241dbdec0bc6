"""``process``: follow the commands ``exec`` moved to the background.

Actions: ``list``, ``poll`` (new output since the last poll, and the status; ``wait_ms``
waits for the end), ``log`` (the kept output by lines, ``offset``/``limit``), ``write``
(stdin ``data``, ``eof`` closes it) and ``kill`` (the whole process group). A session
sees only the processes it started. A turn the owner did not start (``ToolCall.trust``: a
group member speaking in the owner's group) may list, poll and read a process a turn of the
owner started, but not write to it or kill it: what it typed would run with the owner's
command's reach (a shell or an interpreter reading its input writes the workspace).

Writing to a command the owner approved asks the owner again, with the exact text: the
approval covered the command line, not what the model types into it afterwards (a shell
or an installer prompt runs what it reads). Approved commands that were not approved as
interactive have ``/dev/null`` as input, so there is nothing to write to.
"""

from __future__ import annotations

import contextlib

from clawbot import Tool, ToolCall, ToolResult, TurnTrust
from clawbot.types import ApprovalDecision, ApprovalRefused, ApprovalRequest, ServiceUnavailable

from clawbot_tools.calls import schema
from clawbot_tools.fs.common import int_arg
from clawbot_tools.runtime.context import RuntimeContext
from clawbot_tools.runtime.processes import ManagedProcess
from clawbot_tools.runtime.reports import preview, shown, status_line

ACTIONS = ("list", "poll", "log", "write", "kill")
STEERING = ("write", "kill")  # change what the process does: only a turn trusted as much as the one that started it
MAX_WAIT_MS = 60_000
DEFAULT_LOG_LINES = 200
MAX_LOG_LINES = 5000

PARAMETERS = schema(
    {
        "action": {"type": "string", "enum": list(ACTIONS), "description": "What to do."},
        "id": {"type": "string", "description": "Process id from exec (e.g. p-1a2b); all actions but list."},
        "wait_ms": {"type": "integer", "description": f"poll: wait up to this long for the process to finish (max {MAX_WAIT_MS})."},
        "offset": {"type": "integer", "description": "log: first line to show (0-based). Default 0."},
        "limit": {"type": "integer", "description": f"log: lines to show. Default {DEFAULT_LOG_LINES}."},
        "data": {"type": "string", "description": "write: text to send to the process's stdin."},
        "eof": {"type": "boolean", "description": "write: close stdin after the data."},
    },
    ["action"],
)


def make_tool(rt: RuntimeContext) -> Tool:
    async def handler(call: ToolCall) -> ToolResult:
        return await run_process(call, rt)

    return Tool(
        name="process",
        description=(
            "Manage commands exec moved to the background: list them, poll one for new output and its "
            "status (wait_ms waits for it to finish), read its log, write to its stdin, or kill it "
            "(with everything it started)."
        ),
        parameters=PARAMETERS,
        handler=handler,
        summary="Poll, read, write to or kill background exec processes",
        group="runtime",
        profiles=("coding",),
        order=210,
        timeout_s=MAX_WAIT_MS / 1000 + 30,
        concurrent=False,  # writes to and kills processes: runs alone, in call order
    )


async def run_process(call: ToolCall, rt: RuntimeContext) -> ToolResult:
    action = call.arguments.get("action")
    if action not in ACTIONS:
        return ToolResult.error(f"process: action must be one of {', '.join(ACTIONS)}")
    if action == "list":
        return _list(call, rt)
    process_id = call.arguments.get("id")
    process = rt.registry.get(process_id, call.session_key) if isinstance(process_id, str) else None
    if process is None:
        known = ", ".join(p.id for p in rt.registry.list(call.session_key)) or "none"
        return ToolResult.error(f"process: no process {process_id!r} in this session (known: {known})")
    if action in STEERING and _less_trusted(call, process):
        return _not_yours(call, process, action)
    try:
        if action == "poll":
            return await _poll(call, rt, process)
        if action == "log":
            return _log(call, rt, process)
        if action == "write":
            return await _write(call, rt, process)
    except ValueError as exc:
        return ToolResult.error(f"process: {exc}")
    return await _kill(process)


def _less_trusted(call: ToolCall, process: ManagedProcess) -> bool:
    return call.trust is TurnTrust.NON_OWNER and process.trust is TurnTrust.OWNER


def _not_yours(call: ToolCall, process: ManagedProcess, action: str) -> ToolResult:
    return ToolResult.error(
        f"process: refused to {action} {process.id}: a turn of the owner started it, and this turn was started by someone "
        "other than the owner (a group member, another person's chat, or a task one of them set going); what it sends "
        "would run with the owner's command's reach. Nothing was changed. You may still poll it or read its log; "
        "the owner can write to or stop it from their own chat.",
        refused=True,
        process_id=process.id,
    )


def _list(call: ToolCall, rt: RuntimeContext) -> ToolResult:
    processes = sorted(rt.registry.list(call.session_key), key=lambda p: (not p.running, p.started))
    if not processes:
        return ToolResult.text("No processes in this session.", processes=[])
    lines = [f"{p.id}  {_short_status(p):<14} {p.runtime_s():>8.1f} s  {preview(p.command)}" for p in processes]
    details = [{"id": p.id, "status": p.status, "exit_code": p.exit_code, "runtime_s": round(p.runtime_s(), 3), "command": p.command} for p in processes]
    return ToolResult.text("\n".join(lines), processes=details)


def _short_status(process: ManagedProcess) -> str:
    if process.running:
        return "running"
    if process.status == "exited":
        return f"exit {process.exit_code}"
    return process.status


async def _poll(call: ToolCall, rt: RuntimeContext, process: ManagedProcess) -> ToolResult:
    wait_ms = int_arg(call.arguments, "wait_ms", 0, minimum=0, maximum=MAX_WAIT_MS)
    if wait_ms:
        process.awaited += 1  # a poll waiting for the end will report it: no system event needed
        try:
            await process.wait(wait_ms / 1000)
        finally:
            process.awaited -= 1
    finished = not process.running
    output, process.poll_position = process.output.read_from(process.poll_position, final=finished and not process.group_alive)
    process.reported = process.reported or finished
    body = shown(output, rt.secrets, rt.exec.max_output_chars).rstrip("\n") or "(no new output)"
    return ToolResult.text(
        f"{body}\n\n{process.id} {status_line(process)}",
        process_id=process.id,
        status=process.status,
        exit_code=process.exit_code,
        running=process.running,
    )


def _log(call: ToolCall, rt: RuntimeContext, process: ManagedProcess) -> ToolResult:
    offset = int_arg(call.arguments, "offset", 0, minimum=0, maximum=10**9)
    limit = int_arg(call.arguments, "limit", DEFAULT_LOG_LINES, minimum=1, maximum=MAX_LOG_LINES)
    lines = process.output.text().splitlines()
    chosen = lines[offset : offset + limit]
    process.reported = process.reported or not process.running
    if chosen:
        where = f"lines {offset}-{offset + len(chosen) - 1} of {len(lines)}"
    else:
        where = f"no lines from {offset} ({len(lines)} in all)"
    body = shown("\n".join(chosen), rt.secrets, rt.exec.max_output_chars)
    return ToolResult.text(
        f"{body}\n\n[{where}] {process.id} {status_line(process)}".lstrip("\n"),
        process_id=process.id,
        total_lines=len(lines),
        offset=offset,
        lines=len(chosen),
        running=process.running,
    )


async def _write(call: ToolCall, rt: RuntimeContext, process: ManagedProcess) -> ToolResult:
    data = call.arguments.get("data", "")
    eof = call.arguments.get("eof", False)
    if not isinstance(data, str) or not isinstance(eof, bool):
        return ToolResult.error("process: data must be a string and eof true or false")
    if not data and not eof:
        return ToolResult.error("process: nothing to write: give data, or eof: true")
    if not process.running:
        return ToolResult.error(f"process: {process.id} has finished ({process.describe_status()}); nothing to write to")
    if not process.interactive:
        return ToolResult.error(
            f"process: {process.id} has no input to write to: it was approved without interactive input (/dev/null). "
            "Run it again with interactive: true if it needs answers."
        )
    if process.approved:
        return _ask_to_write(call, rt, process, data, eof)
    return await _deliver(process, data, eof)


def _ask_to_write(call: ToolCall, rt: RuntimeContext, process: ManagedProcess, data: str, eof: bool) -> ToolResult:
    services = call.services
    if services is None:
        return ToolResult.error(f"process: writing to {process.id} needs the user's approval, and this run has no chat")
    what = f"write to {process.id} ({process.command}): {data!r}" + (" and close its input" if eof else "")

    async def decided(decision: ApprovalDecision) -> None:
        if decision not in (ApprovalDecision.ALLOW_ONCE, ApprovalDecision.ALLOW_ALWAYS) or not process.running:
            return
        with contextlib.suppress(OSError, RuntimeError):
            await process.write(data, eof=eof)

    request = ApprovalRequest(
        tool_name="process",
        command=what,
        allow_always=False,
        on_decision=decided,
        reason=f"{process.id} was approved by the user; what is typed into it needs approval too",
        expires_in_s=float(rt.exec.approval_expiry_s),
    )
    try:
        ticket = services.request_approval(request)
    except (ApprovalRefused, ServiceUnavailable) as exc:
        return ToolResult.error(f"process: writing to {process.id} needs the owner's approval: {exc}. Nothing was written.")
    return ToolResult.text(
        f"Approval required (approval-pending): nothing was written to {process.id} yet.\nInput: {data!r}\n"
        f"Reply with: {ticket.reply_with}. Once approved, it is written; poll the process to see what it did.",
        status="approval-pending",
        approval_id=ticket.id,
        process_id=process.id,
    )


async def _deliver(process: ManagedProcess, data: str, eof: bool) -> ToolResult:
    try:
        await process.write(data, eof=eof)
    except (OSError, RuntimeError) as exc:
        return ToolResult.error(f"process: cannot write to {process.id}: {exc}")
    size = len(data.encode("utf-8"))
    closed = " and closed stdin" if eof else ""
    return ToolResult.text(f"Wrote {size} bytes to {process.id}{closed}.", process_id=process.id, bytes=size, eof=eof)


async def _kill(process: ManagedProcess) -> ToolResult:
    if not process.group_alive:
        return ToolResult.text(
            f"{process.id} had already finished ({process.describe_status()}); nothing to kill.",
            process_id=process.id,
            status=process.status,
        )
    was_running = process.running
    await process.kill()
    what = "Killed" if was_running else "Killed the leftover background processes of"
    return ToolResult.text(f"{what} {process.id} {status_line(process)}.", process_id=process.id, status=process.status)
