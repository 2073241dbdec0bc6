"""The ``memory`` tool group: ``memory_search`` and ``memory_get`` over the agent's Markdown memory.

Both only pass the call on to the active memory provider through ``call.services`` (bound to
the turn's agent, so one agent never reaches another's memory). The kernel offers them only
while a memory provider is active; memory is written with the ordinary write and edit tools.
"""

from __future__ import annotations

from clawbot import Tool

from clawbot_tools.config import ToolsSettings


def tools(settings: ToolsSettings) -> list[Tool]:
    from clawbot_tools.memory import get, search

    return [search.make_tool(), get.make_tool()]
