"""Declarations of the session and messaging tools, and their answer outside an agent turn.

Their behaviour inside turns (real kernel services, the gateway) is tested in
tests/agent/test_tool_services.py.
"""

from __future__ import annotations

import inspect
from pathlib import Path

from clawbot import ToolCall
from clawbot.testing import schema_problem
from clawbot_tools.config import ToolsSettings
from clawbot_tools.messaging import tools as messaging_tools
from clawbot_tools.sessions import tools as session_tools

SESSION_TOOLS = ["session_status", "agents_list", "sessions_list", "sessions_history", "sessions_send"]


def test_declarations() -> None:
    found = session_tools(ToolsSettings()) + messaging_tools(ToolsSettings())
    assert [t.name for t in found] == [*SESSION_TOOLS, "message"]
    for tool in found:
        assert tool.group == ("messaging" if tool.name == "message" else "sessions")
        assert tool.summary and "\n" not in tool.summary
        assert schema_problem(tool.parameters) is None and tool.parameters["additionalProperties"] is False


async def test_without_services_each_tool_says_it_needs_an_agent_turn(tmp_path: Path) -> None:
    arguments = {"sessions_send": {"session_key": "agent:x:main", "message": "hi"}, "message": {"message": "hi"}}
    for tool in session_tools(ToolsSettings()) + messaging_tools(ToolsSettings()):
        outcome = tool.handler(ToolCall("c1", tool.name, arguments.get(tool.name, {}), "main", "agent:main:main", tmp_path))
        result = await outcome if inspect.isawaitable(outcome) else outcome
        assert result.is_error and "only works inside an agent turn" in result.content[0].text, tool.name
