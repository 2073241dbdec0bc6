"""``session_status``: the current date and time in the user's zone, the model, the usage.

This is how the model learns the time: the system prompt never carries the clock (it
would change every turn and break the provider's prompt cache).
"""

from __future__ import annotations

from clawbot import Tool, ToolCall, ToolResult

from clawbot_tools.calls import schema, services_of
from clawbot_tools.sessions.common import GROUP, cost_text, usage_line


def session_status(call: ToolCall) -> ToolResult:
    services = services_of(call)
    if isinstance(services, ToolResult):
        return services
    status = services.status()
    offset = status.now.strftime("%z")
    lines = [
        f"Now: {status.now:%A %Y-%m-%d %H:%M} ({status.timezone}, UTC{offset[:3]}:{offset[3:]})",
        f"Agent: {status.agent_id} | session: {status.session_key}",
        f"Model: {status.model or 'unknown'}" + (f" | thinking: {status.thinking}" if status.thinking else ""),
        f"Usage so far: {status.turns} turns, {usage_line(status.usage)}; cost {cost_text(status.cost_usd)}",
    ]
    if status.channel:
        lines.append(f"Channel: {status.channel}")
    return ToolResult.text(
        "\n".join(lines),
        now=status.now.isoformat(),
        timezone=status.timezone,
        model=status.model,
        turns=status.turns,
        session_key=status.session_key,
    )


def make_tool() -> Tool:
    return Tool(
        name="session_status",
        description=(
            "Current date and time in the user's time zone, plus this session's agent, model, token usage "
            "and cost. Call it whenever the date or time matters: you have no other clock."
        ),
        parameters=schema({}),
        handler=session_status,
        summary="Current date/time (user's zone), model and usage of this session",
        group=GROUP,
        profiles=("minimal", "coding", "messaging"),
        order=550,
        concurrent=True,  # reads the clock and the session index only
    )
