"""``exec``: run a shell command in the workspace, inside the OS sandbox, once the gate agrees.

The OS sandbox (:mod:`~clawbot_tools.runtime.sandboxing`) decides what a command can touch:
the workspace and a private temp dir read-write, the system and the agent's skills
read-only, nothing else of the user's home or of clawbot's state, no network. The gate
(:mod:`~clawbot_tools.runtime.exec_policy`) decides when to ask the user first; asking for
more than the sandbox gives (``network``, ``sandbox: false``) always asks, in every mode.

A command runs in the foreground for ``yield_ms``; if it is still running then, the result
says so and it continues in the background under ``process``. A non-zero exit code is a
normal result; only a command that cannot start is an error, and so is one more command than
a session may have running at once (``max_processes``).
"""

from __future__ import annotations

import asyncio
import os
import subprocess

import attrs
from clawbot import Tool, ToolCall, ToolResult
from clawbot.types import ToolServices

from clawbot_tools.calls import schema
from clawbot_tools.fs.common import int_arg
from clawbot_tools.fs.paths import PathRefused, display, resolve, workspace_root
from clawbot_tools.read_only import WHY, exec_note
from clawbot_tools.runtime import approval_flow
from clawbot_tools.runtime.context import Job, RuntimeContext
from clawbot_tools.runtime.envscrub import EnvRefused, child_env, extra_env
from clawbot_tools.runtime.exec_policy import PolicyInput, decide
from clawbot_tools.runtime.processes import ManagedProcess, TooManyProcesses
from clawbot_tools.runtime.remembered_commands import binding_of, recall, unapproved_running
from clawbot_tools.runtime.reports import event_text, finished_text, shown, yielded_text
from clawbot_tools.runtime.sandbox import SandboxError

GROUP = "runtime"
MAX_YIELD_MS = 120_000
MAX_COMMAND_CHARS = 100_000

PARAMETERS = schema(
    {
        "command": {"type": "string", "description": "Shell command line (run by /bin/sh; pipes, && and ; work)."},
        "cwd": {"type": "string", "description": "Working directory inside the workspace. Default: the workspace."},
        "timeout": {"type": "integer", "description": "Seconds before the command (and everything it started) is killed."},
        "env": {
            "type": "object",
            "additionalProperties": {"type": "string"},
            "description": "Extra environment variables: LANG, LC_*, TZ, TERM, COLUMNS, LINES, NO_COLOR, CI, PYTHONUNBUFFERED and the like.",
        },
        "yield_ms": {"type": "integer", "description": "Milliseconds to wait before the command continues in the background."},
        "background": {"type": "boolean", "description": "true: start it in the background right away."},
        "network": {
            "type": "boolean",
            "description": "true: the command needs the network (downloads, package installs). Always asks the user first.",
        },
        "sandbox": {
            "type": "boolean",
            "description": "false: run it outside the sandbox, with the user's full access. Always asks the user; only for "
            "what the sandbox blocks and the user must allow.",
        },
        "interactive": {
            "type": "boolean",
            "description": "true: once approved, keep its input open so you can answer its prompts with process write "
            "(each write asks the user again). Otherwise an approved command's input is empty.",
        },
    },
    ["command"],
)


def make_tool(rt: RuntimeContext) -> Tool:
    async def handler(call: ToolCall) -> ToolResult:
        return await run_exec(call, rt)

    # what the sandbox lets every command write, as configured: the description never claims less
    writes = "the workspace and a private temp dir ($TMPDIR)"
    if rt.exec.sandbox_write:
        writes = f"the workspace, a private temp dir ($TMPDIR) and {', '.join(rt.exec.sandbox_write)}"
    return Tool(
        name="exec",
        description=(
            f"Run a shell command in the workspace, inside a sandbox: it can read the system and the workspace, write "
            f"only {writes}, and has no network. stdout and stderr come back merged, "
            f"with the exit code. A command still running after yield_ms (default {rt.exec.yield_ms} ms) continues in the "
            "background: use the process tool to poll it, read its log, write to its stdin or kill it. To keep a server "
            "running, start it with background: true (what a command leaves running with & may end with it). Commands outside "
            "the allowlist, destructive ones, and any that ask for network or to leave the sandbox need the user's "
            "approval: the result then says approval-pending and gives the exact /approve line to relay. "
            f"A session may have at most {rt.exec.max_processes} commands running at once."
        ),
        parameters=PARAMETERS,
        handler=handler,
        summary="Run shell commands in a sandbox (long runs continue in the background under process)",
        group=GROUP,
        profiles=("coding",),
        order=200,
        timeout_s=MAX_YIELD_MS / 1000 + 30,
        concurrent=False,  # a command can change anything: runs alone, in call order
    )


def _flag(args: dict, name: str, default: bool) -> bool:
    value = args.get(name, default)
    if not isinstance(value, bool):
        raise ValueError(f"{name} must be true or false")
    return value


def _job(call: ToolCall, rt: RuntimeContext) -> tuple[Job, float]:
    """The job the call describes, and its yield in seconds; ``ValueError``/``PathRefused``/``EnvRefused``."""
    args = call.arguments
    command = args.get("command")
    if not isinstance(command, str) or not command.strip():
        raise ValueError("command must be a non-empty string")
    if "\x00" in command or len(command) > MAX_COMMAND_CHARS:
        raise ValueError(f"command must not contain NUL bytes or exceed {MAX_COMMAND_CHARS} characters")
    cwd = resolve(call, args.get("cwd", "."), rt.settings)
    if not cwd.is_dir():
        raise PathRefused(f"cwd {display(call, cwd)} is not an existing directory")
    timeout = int_arg(args, "timeout", rt.exec.timeout_s, minimum=1, maximum=rt.exec.max_timeout_s)
    if _flag(args, "background", False):
        yield_ms = 0
    else:
        yield_ms = int_arg(args, "yield_ms", min(rt.exec.yield_ms, MAX_YIELD_MS), minimum=0, maximum=MAX_YIELD_MS)
    added = extra_env(args.get("env"), rt.exec.env_allow)
    env = child_env(rt.base_env, rt.exec.env_passthrough, added)
    env["PWD"] = os.fspath(cwd)  # the shell's logical directory starts where the gate's analysis starts
    readable = call.services.readable_roots() if call.services is not None else ()
    job = Job(
        command,
        os.fspath(cwd),
        env,
        float(timeout),
        call.session_key,
        call.agent_id,
        workspace=os.path.realpath(workspace_root(call)),
        added_env=added,
        readable=tuple(readable),
        network=_flag(args, "network", False),
        sandboxed=_flag(args, "sandbox", True),
        interactive=_flag(args, "interactive", False),
        trust=call.trust,
    )
    return job, yield_ms / 1000


async def run_exec(call: ToolCall, rt: RuntimeContext) -> ToolResult:
    try:
        job, yield_s = _job(call, rt)
    except (ValueError, PathRefused, EnvRefused) as exc:
        return ToolResult.error(f"exec: {exc}")
    choice = await asyncio.to_thread(rt.sandbox.choice)  # the first call probes (it may start a process)
    if problem := rt.sandbox.problem():
        return ToolResult.error(f"exec: {problem}.", status="refused")
    confined = choice.mechanism.confines and job.sandboxed
    if not confined and not job.workspace_writable:
        return ToolResult.error(f"exec: refused: {WHY}, and {_unconfined(job)} could not keep it so. Nothing ran.", status="refused")
    given = PolicyInput(
        settings=rt.exec,
        cwd=job.cwd,
        workspace=job.workspace,
        path_value=job.env["PATH"],
        home=rt.home,
        remembered=await asyncio.to_thread(rt.store.allowed, job.agent_id),
        confined=confined,
        hides_names=confined and choice.mechanism.hides_names,
        guards_metadata=confined and choice.mechanism.guards_metadata,
    )
    verdict = await asyncio.to_thread(decide, job.command, given)  # PATH lookups touch the disk
    if verdict.action == "refuse":
        return ToolResult.error(f"exec: {verdict.reasons[0]}. Nothing ran.", status="refused")
    if job.grants:
        verdict = approval_flow.with_grants(verdict, job, choice.mechanism.name)
    remembered = False
    if verdict.action == "ask":
        binding = await asyncio.to_thread(binding_of, rt, job)  # reads (and hashes) files
        if not verdict.destructive:
            allowed = await asyncio.to_thread(rt.store.remembered, job.agent_id, job.remembered_as(choice.mechanism.name))
            extra = job.grants or not confined or rt.sandbox.grants_writes()
            recalled = recall(verdict, binding, allowed, extra_grants=extra, cwd=job.cwd)
            remembered, verdict = recalled.runs, recalled.verdict
            if remembered and extra and (running := unapproved_running(rt, job)):
                remembered = False  # one of them could rewrite a file it runs as it starts
                busy = f"it was allowed always, but {', '.join(running)} of this agent still running could change the files it runs as it starts"
                verdict = attrs.evolve(verdict, reasons=(busy, *verdict.reasons))
        if not remembered:
            return approval_flow.ask(call, rt, job, verdict, binding)
    try:  # the user allowed this exact command always: it runs as approved, with the input the approval said
        process = await approval_flow.start_job(rt, job, approved=remembered, bound=binding if remembered else None)
    except approval_flow.FilesChanged as exc:
        return ToolResult.error(
            f"exec: {exc} just before it started, so its approval no longer covers it. Nothing ran; run it again to ask the user.", status="refused"
        )
    except TooManyProcesses as exc:
        return ToolResult.error(f"exec: {exc}. Nothing ran.", status="too-many-processes")
    except SandboxError as exc:
        return ToolResult.error(f"exec: the sandbox could not be set up, so nothing ran: {exc}", status="failed")
    except (OSError, RuntimeError, subprocess.SubprocessError) as exc:
        return ToolResult.error(f"exec: the command could not start, so nothing ran: {exc}", status="failed")
    note = exec_note(call) or rt.sandbox.notice_once()
    if await process.wait(yield_s):
        if process.exit_code in (126, 127) and job.sandboxed:
            note = rt.sandbox.not_found_hint(job) or note
        return _finished(process, rt, note)
    return _yielded(process, rt, yield_s, call.services, note)


def _unconfined(job: Job) -> str:
    return "a command outside the sandbox" if not job.sandboxed else "without an OS sandbox here, a command"


def _with_note(text: str, note: str | None) -> str:
    return f"{note}\n\n{text}" if note else text


def _finished(process: ManagedProcess, rt: RuntimeContext, note: str | None) -> ToolResult:
    text = finished_text(process, rt.secrets, rt.exec.max_output_chars)
    if not process.group_alive:
        rt.registry.forget(process.id)  # its whole output is in this result
    return ToolResult.text(
        _with_note(text, note),
        status=process.status,
        exit_code=process.exit_code,
        duration_s=round(process.runtime_s(), 3),
        process_id=process.id if process.group_alive else None,
        output_bytes=process.output.total,
    )


def _yielded(process: ManagedProcess, rt: RuntimeContext, yield_s: float, services: ToolServices | None, note: str | None) -> ToolResult:
    process.backgrounded = True
    output, process.poll_position = process.output.read_from(0)
    notify = rt.exec.notify_on_exit and services is not None
    if notify:
        rt.registry.spawn(_notify_when_done(process, rt, services), name=f"exec:{process.id}:notify")
    text = yielded_text(process, shown(output, rt.secrets, rt.exec.max_output_chars), yield_s, notify=notify)
    return ToolResult.text(_with_note(text, note), status="running", process_id=process.id, command=process.command)


async def _notify_when_done(process: ManagedProcess, rt: RuntimeContext, services: ToolServices) -> None:
    await process.wait(None)
    if process.status == "killed" or process.reported or process.awaited:
        return  # the model stopped it, or already saw how it ended
    await approval_flow.post(services, event_text(process, rt.secrets, approved=False))
