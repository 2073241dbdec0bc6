"""``sessions_list``: recent sessions, newest first, with their turn counts and models."""

from __future__ import annotations

from clawbot import Tool, ToolCall, ToolResult

from clawbot_tools.calls import schema, services_of
from clawbot_tools.sessions.common import GROUP

DEFAULT_LIMIT = 20
MAX_LIMIT = 200


def sessions_list(call: ToolCall) -> ToolResult:
    services = services_of(call)
    if isinstance(services, ToolResult):
        return services
    limit = min(int(call.arguments.get("limit", DEFAULT_LIMIT)), MAX_LIMIT)
    found = services.sessions(limit=limit, agent_id=call.arguments.get("agent"))
    if not found:
        return ToolResult.text("No sessions yet.", sessions=[])
    lines = [
        f"- {s.key}: {s.turns} turns, last active {s.updated_at}, model {s.model or 'unknown'}" + (" <- this session" if s.key == services.session_key else "")
        for s in found
    ]
    return ToolResult.text(
        "\n".join(lines),
        sessions=[{"key": s.key, "agent": s.agent_id, "turns": s.turns, "updated_at": s.updated_at} for s in found],
    )


def make_tool() -> Tool:
    return Tool(
        name="sessions_list",
        description="List recent sessions (conversations), newest first: key, turns, last activity, model.",
        parameters=schema(
            {
                "limit": {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT, "description": f"Most sessions to list. Default {DEFAULT_LIMIT}."},
                "agent": {"type": "string", "description": "Only this agent's sessions (an id from agents_list)."},
            }
        ),
        handler=sessions_list,
        summary="List recent sessions with their activity",
        group=GROUP,
        profiles=("coding", "messaging"),
        order=510,
        concurrent=True,  # reads the session index only
    )
