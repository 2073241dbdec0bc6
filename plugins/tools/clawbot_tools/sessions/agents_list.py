"""``agents_list``: the configured agents, which one is the default, their models, and which
of them this session may start as a sub-agent (``sessions_spawn``)."""

from __future__ import annotations

from clawbot import Tool, ToolCall, ToolResult

from clawbot_tools.calls import schema, services_of
from clawbot_tools.sessions.common import GROUP


def agents_list(call: ToolCall) -> ToolResult:
    services = services_of(call)
    if isinstance(services, ToolResult):
        return services
    agents = services.agents()
    lines = [
        f"- {a.id}"
        + (f" ({a.name})" if a.name and a.name != a.id else "")
        + (" [default]" if a.default else "")
        + f": model {a.model or 'auto'}"
        + (" <- you" if a.id == services.agent_id else "")
        + ("" if a.may_spawn else " (cannot be spawned from here)")
        for a in agents
    ]
    return ToolResult.text(
        f"{len(agents)} agent(s):\n" + "\n".join(lines),
        agents=[{"id": a.id, "name": a.name, "default": a.default, "model": a.model, "may_spawn": a.may_spawn} for a in agents],
    )


def make_tool() -> Tool:
    return Tool(
        name="agents_list",
        description=(
            "List the agents configured in this clawbot (id, name, default, model) and which this session "
            "may start as a sub-agent; use an id with sessions_send or sessions_spawn."
        ),
        parameters=schema({}),
        handler=agents_list,
        summary="List the configured agents",
        group=GROUP,
        profiles=("coding",),
        order=500,
        concurrent=True,  # reads the configuration only
    )
