"""``sessions_spawn``: hand one task to a sub-agent that works in a session of its own.

It returns at once with the run id and the sub-agent's session; the result arrives later in
this session as clawbot's report (a system event), when the sub-agent is done, failed,
timed out or was stopped. ``agents_list`` says which agents may be spawned.
"""

from __future__ import annotations

from clawbot import ServiceUnavailable, Tool, ToolCall, ToolResult

from clawbot_subagents.api import Subagents
from clawbot_subagents.runs import SPAWN_TOOL

MAX_TIMEOUT_S = 24 * 3600
GROUP = "sessions"


async def sessions_spawn(call: ToolCall) -> ToolResult:
    services = call.services
    if services is None:
        return ToolResult.error(f"{call.tool_name} is unavailable here: it only works inside an agent turn.")
    args = call.arguments
    timeout = args.get("timeout_seconds")
    target = args.get("agent_id") or call.agent_id
    try:
        agent = next((a for a in services.agents() if a.id == target), None)
        if agent is None:
            raise ServiceUnavailable(f"no agent {target!r} is configured; agents_list shows them")
        if not agent.may_spawn:
            raise ServiceUnavailable(
                f"agent {call.agent_id!r} may not start a sub-agent of agent {target!r}: only the main session may, "
                "with both listed in tools.agent_to_agent; agents_list shows which agents may be spawned"
            )
        run = await services.capability(Subagents).spawn(
            args["task"],
            agent_id=target,
            model=args.get("model") or None,
            timeout_s=float(timeout) if timeout is not None else None,
        )
    except ServiceUnavailable as exc:
        return ToolResult.error(f"sessions_spawn: {exc}")
    return ToolResult.text(
        f"Started sub-agent {run.run_id} (agent {run.agent_id}) in session {run.session_key}. "
        "It works in the background; its result will arrive here as a report when it ends. Do not wait or poll for it.",
        run_id=run.run_id,
        session_key=run.session_key,
        agent_id=run.agent_id,
    )


def make_tool() -> Tool:
    return Tool(
        name=SPAWN_TOOL,
        description=(
            "Start a sub-agent on one self-contained task, in a session of its own; returns its run id at once. "
            "Its result is reported back to this session when it ends. It gets at most your tools. "
            "agent_id: another agent (agents_list shows which may be spawned); default: yours."
        ),
        parameters={
            "type": "object",
            "properties": {
                "task": {"type": "string", "minLength": 1, "description": "Everything the sub-agent needs to know to do the task."},
                "agent_id": {"type": "string", "description": "The agent to run it (default: this one)."},
                "model": {"type": "string", "description": "A model ref or alias for the sub-agent (no fallback); default: its agent's."},
                "timeout_seconds": {
                    "type": "number",
                    "exclusiveMinimum": 0,
                    "maximum": MAX_TIMEOUT_S,
                    "description": "Stop it after this long; at most agents.defaults.subagents.timeout_s (the default).",
                },
            },
            "required": ["task"],
            "additionalProperties": False,
        },
        handler=sessions_spawn,
        summary="Start a sub-agent on a task in the background",
        group=GROUP,
        profiles=("coding",),
        order=540,
        concurrent=False,
    )
