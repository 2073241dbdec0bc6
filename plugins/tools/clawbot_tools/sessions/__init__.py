"""The ``sessions`` tool group: the clock and usage, other agents and sessions (the
sub-agents plugin adds ``sessions_spawn`` to the group).

These tools only talk to the kernel through ``call.services`` (a narrow facade bound to the
calling session); outside an agent turn there are no services and they say so.
"""

from __future__ import annotations

from clawbot import Tool

from clawbot_tools.config import ToolsSettings


def tools(settings: ToolsSettings) -> list[Tool]:
    from clawbot_tools.sessions import agents_list, history, send, session_list, status

    return [module.make_tool() for module in (status, agents_list, session_list, history, send)]
