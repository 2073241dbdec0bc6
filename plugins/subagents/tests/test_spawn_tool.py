"""The declaration of sessions_spawn, and its answer outside an agent turn (its behaviour in
turns, through the Subagents capability, is tested in test_subagents.py)."""

from __future__ import annotations

from pathlib import Path

import jsonschema
from clawbot import ToolCall
from clawbot_subagents.tool import make_tool


def test_declaration() -> None:
    tool = make_tool()
    assert tool.name == "sessions_spawn" and tool.group == "sessions"
    assert tool.summary and "\n" not in tool.summary
    jsonschema.Draft202012Validator.check_schema(tool.parameters)  # a usable JSON schema, as the kernel checks at the first call
    assert tool.parameters["additionalProperties"] is False


async def test_without_services_it_says_it_needs_an_agent_turn(tmp_path: Path) -> None:
    tool = make_tool()
    result = await tool.handler(ToolCall("c1", tool.name, {"task": "t"}, "main", "agent:main:main", tmp_path))
    assert result.is_error and "only works inside an agent turn" in result.content[0].text, tool.name
