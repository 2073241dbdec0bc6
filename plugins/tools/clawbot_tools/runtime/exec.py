"""``exec``: run a shell command in the workspace, after the policy has decided it may.

The analysis of :mod:`~clawbot_tools.runtime.exec_policy` is the gate; ``/bin/sh -c`` only
runs what passed it. A command runs in the foreground for ``yield_ms``; if it is still
running then, the result says so and it continues in the background under ``process``.
A non-zero exit code is a normal result; only a command that cannot start is an error, and
so is one more command than a session may have running at once (``max_processes``).
"""

from __future__ import annotations

import asyncio
import os

from clawbot import Tool, ToolCall, ToolResult
from clawbot.types import ToolServices

from clawbot_tools.fs.common import int_arg, schema
from clawbot_tools.fs.paths import PathRefused, display, resolve, workspace_root
from clawbot_tools.runtime import approval_flow
from clawbot_tools.runtime.context import Job, RuntimeContext
from clawbot_tools.runtime.envscrub import EnvRefused, child_env, extra_env
from clawbot_tools.runtime.exec_policy import PolicyInput, decide
from clawbot_tools.runtime.processes import ManagedProcess, TooManyProcesses
from clawbot_tools.runtime.reports import event_text, finished_text, shown, yielded_text

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
            "description": "Extra environment variables (PATH, LD_*, HOME and similar cannot be set).",
        },
        "yield_ms": {"type": "integer", "description": "Milliseconds to wait before the command continues in the background."},
        "background": {"type": "boolean", "description": "true: start it in the background right away."},
    },
    ["command"],
)


def make_tool(rt: RuntimeContext) -> Tool:
    async def handler(call: ToolCall) -> ToolResult:
        return await run_exec(call, rt)

    return Tool(
        name="exec",
        description=(
            "Run a shell command in the workspace. stdout and stderr come back merged, with the exit code. "
            f"A command still running after yield_ms (default {rt.exec.yield_ms} ms) continues in the background: "
            "use the process tool to poll it, read its log, write to its stdin or kill it. Commands outside the "
            "allowlist, and destructive ones, need the user's approval: the result then says approval-pending "
            "and gives the exact /approve line to relay. Secrets are removed from the environment. "
            f"A session may have at most {rt.exec.max_processes} commands running at once."
        ),
        parameters=PARAMETERS,
        handler=handler,
        summary="Run shell commands (long runs continue in the background under process)",
        group=GROUP,
        timeout_s=MAX_YIELD_MS / 1000 + 30,
    )


def _arguments(call: ToolCall, rt: RuntimeContext) -> tuple[str, str, int, float, dict[str, str]]:
    """(command, cwd, timeout s, yield s, env extras); ``ValueError``/``PathRefused``/``EnvRefused``."""
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
    if args.get("background") is True:
        yield_ms = 0
    else:
        yield_ms = int_arg(args, "yield_ms", min(rt.exec.yield_ms, MAX_YIELD_MS), minimum=0, maximum=MAX_YIELD_MS)
    return command, os.fspath(cwd), timeout, yield_ms / 1000, extra_env(args.get("env"))


async def run_exec(call: ToolCall, rt: RuntimeContext) -> ToolResult:
    try:
        command, cwd, timeout, yield_s, extra = _arguments(call, rt)
    except (ValueError, PathRefused, EnvRefused) as exc:
        return ToolResult.error(f"exec: {exc}")
    env = child_env(rt.base_env, rt.exec.env_passthrough, extra)
    env["PWD"] = cwd  # the shell's logical directory starts where the gate's analysis starts
    given = PolicyInput(
        settings=rt.exec, cwd=cwd, workspace=workspace_root(call), path_value=env["PATH"], home=rt.home,
        remembered=await asyncio.to_thread(rt.store.allowed, call.agent_id),
    )
    verdict = await asyncio.to_thread(decide, command, given)  # PATH lookups touch the disk
    if verdict.action == "refuse":
        return ToolResult.error(f"exec: {verdict.reasons[0]}. Nothing ran.", status="refused")
    job = Job(command, cwd, env, float(timeout), call.session_key, call.agent_id)
    if verdict.action == "ask":
        return approval_flow.ask(call, rt, job, verdict)
    try:
        process = await rt.registry.start(
            command, cwd=cwd, env=env, timeout_s=timeout, session_key=call.session_key, agent_id=call.agent_id
        )
    except TooManyProcesses as exc:
        return ToolResult.error(f"exec: {exc}. Nothing ran.", status="too-many-processes")
    except (OSError, RuntimeError) as exc:
        return ToolResult.error(f"exec: the command could not start: {exc}", status="failed")
    if await process.wait(yield_s):
        return _finished(process, rt)
    return _yielded(process, rt, yield_s, call.services)


def _finished(process: ManagedProcess, rt: RuntimeContext) -> ToolResult:
    text = finished_text(process, rt.secrets, rt.exec.max_output_chars)
    if not process.group_alive:
        rt.registry.forget(process.id)  # its whole output is in this result
    return ToolResult.text(
        text,
        status=process.status,
        exit_code=process.exit_code,
        duration_s=round(process.runtime_s(), 3),
        process_id=process.id if process.group_alive else None,
        output_bytes=process.output.total,
    )


def _yielded(process: ManagedProcess, rt: RuntimeContext, yield_s: float, services: ToolServices | None) -> ToolResult:
    process.backgrounded = True
    output, process.poll_position = process.output.read_from(0)
    notify = rt.exec.notify_on_exit and services is not None
    if notify:
        rt.registry.spawn(_notify_when_done(process, rt, services), name=f"exec:{process.id}:notify")
    text = yielded_text(process, shown(output, rt.secrets, rt.exec.max_output_chars), yield_s, notify=notify)
    return ToolResult.text(text, status="running", process_id=process.id, command=process.command)


async def _notify_when_done(process: ManagedProcess, rt: RuntimeContext, services: ToolServices) -> None:
    await process.wait(None)
    if process.status == "killed" or process.reported or process.awaited:
        return  # the model stopped it, or already saw how it ended
    await approval_flow.post(services, event_text(process, rt.secrets, approved=False))
