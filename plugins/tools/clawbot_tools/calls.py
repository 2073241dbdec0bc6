"""What the tools that talk to the running clawbot share: an object schema, and their
services or the error to return when a call runs outside an agent turn."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from clawbot import ToolCall, ToolResult, ToolServices


def schema(properties: Mapping[str, Any], required: list[str] | None = None) -> dict[str, Any]:
    return {"type": "object", "properties": dict(properties), "required": required or [], "additionalProperties": False}


def services_of(call: ToolCall) -> ToolServices | ToolResult:
    """The call's services, or the error result to return when it runs without them."""
    if call.services is None:
        return ToolResult.error(f"{call.tool_name} is unavailable here: it only works inside an agent turn.")
    return call.services
