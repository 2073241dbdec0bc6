"""The one order tools are shown in: tools that declare an ``order`` first, lowest first,
then the rest A-Z.

The request's tool list and the prompt's Tooling section use the same order, so what the
model reads and what it is offered line up, and neither depends on plugin load order. The
order is each tool's own data (``Tool.order``), so the kernel names no tool.
"""

from __future__ import annotations

from collections.abc import Iterable

from clawbot.types import Tool


def _place(tool: Tool) -> tuple[bool, int, str, str]:
    return (tool.order is None, tool.order or 0, tool.name.lower(), tool.name)


def ordered_tools(tools: Iterable[Tool]) -> list[Tool]:
    """Ordered tools by their ``order``, then every other tool alphabetically (first of a
    name wins; the registry already refuses duplicates)."""
    seen: set[str] = set()
    unique = []
    for tool in tools:
        if tool.name not in seen:
            seen.add(tool.name)
            unique.append(tool)
    return sorted(unique, key=_place)
