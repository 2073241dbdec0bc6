"""The one order tools are shown in: the core tools in a fixed order, then the rest A-Z.

The request's tool list and the prompt's Tooling section use the same order, so what the
model reads and what it is offered line up, and neither depends on plugin load order.
"""

from __future__ import annotations

from collections.abc import Iterable

from clawbot.types import Tool

CORE_TOOL_ORDER = (
    "read", "write", "edit", "apply_patch", "grep", "find", "ls",
    "exec", "process", "web_search", "web_fetch", "message",
    "agents_list", "sessions_list", "sessions_history", "sessions_send", "sessions_spawn", "session_status",
    "memory_search", "memory_get", "cron", "image", "gateway",
)  # fmt: skip
_CORE_RANK = {name: rank for rank, name in enumerate(CORE_TOOL_ORDER)}


def ordered_tools(tools: Iterable[Tool]) -> list[Tool]:
    """Core tools in their fixed order, then every other tool alphabetically (first of a
    name wins; the registry already refuses duplicates)."""
    seen: set[str] = set()
    unique = []
    for tool in tools:
        if tool.name not in seen:
            seen.add(tool.name)
            unique.append(tool)
    return sorted(unique, key=lambda t: (_CORE_RANK.get(t.name.lower(), len(_CORE_RANK)), t.name.lower(), t.name))
