"""Tool policy: which registered tools an agent's model may see and call.

A profile gives the base set (``minimal``, ``coding``, ``messaging``, ``full``); a
non-empty ``allow`` narrows it to the names listed; ``deny`` removes names and always wins.
Patterns are a tool name, ``*``, or ``group:<group>`` (a tool's ``group``). An agent with its
own ``tools`` table replaces the profile and allow list; the global deny list still applies.
The model is only ever sent the allowed tools, and a call to any other is "unknown".
"""

from __future__ import annotations

from collections.abc import Iterable

from clawbot.config.schema import ClawbotConfig
from clawbot.types import Tool

PROFILES: dict[str, tuple[str, ...]] = {
    "minimal": ("session_status",),
    "coding": ("group:fs", "group:runtime", "group:sessions", "group:memory", "image"),
    "messaging": ("group:messaging", "sessions_list", "sessions_history", "sessions_send", "session_status"),
    "full": ("*",),
}


def matches(tool: Tool, pattern: str) -> bool:
    if pattern == "*":
        return True
    if pattern.startswith("group:"):
        return tool.group == pattern.removeprefix("group:")
    return tool.name == pattern


def _any(tool: Tool, patterns: Iterable[str]) -> bool:
    return any(matches(tool, p) for p in patterns)


def allowed_tools(tools: Iterable[Tool], config: ClawbotConfig, agent_id: str) -> dict[str, Tool]:
    """The tools ``agent_id`` may use, by name, in registry order."""
    agent = config.agent(agent_id)
    policy = agent.tools if agent is not None and agent.tools is not None else config.tools
    deny = [*config.tools.deny, *(policy.deny if policy is not config.tools else ())]
    chosen = {}
    for tool in tools:
        if not _any(tool, PROFILES[policy.profile]):
            continue
        if policy.allow and not _any(tool, policy.allow):
            continue
        if _any(tool, deny):
            continue
        chosen[tool.name] = tool
    return chosen
