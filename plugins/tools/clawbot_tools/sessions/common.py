"""Shared by the session tools: schemas, the services check, compact number formats."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from clawbot import ToolCall, ToolResult, ToolServices, Usage

GROUP = "sessions"


def schema(properties: Mapping[str, Any], required: list[str] | None = None) -> dict[str, Any]:
    return {"type": "object", "properties": dict(properties), "required": required or [], "additionalProperties": False}


def services_of(call: ToolCall) -> ToolServices | ToolResult:
    """The call's services, or the error result to return when it runs without them."""
    if call.services is None:
        return ToolResult.error(f"{call.tool_name} is unavailable here: it only works inside an agent turn.")
    return call.services


def usage_line(usage: Usage) -> str:
    line = f"{usage.input_tokens:,} in / {usage.output_tokens:,} out tokens"
    if usage.cache_read_tokens:
        line += f" (cache read {usage.cache_read_tokens:,})"
    return line


def cost_text(cost: float | None) -> str:
    return "unknown (no price configured)" if cost is None else f"${cost:.4f}"
