"""The file tools (group ``fs``): read, write, edit, ls, find, grep, confined to the workspace."""

from __future__ import annotations

from clawbot import Tool

from clawbot_tools.config import ToolsSettings


def tools(settings: ToolsSettings) -> list[Tool]:
    from clawbot_tools.fs import edit, find, grep, ls, read, write

    return [module.make_tool(settings) for module in (read, write, edit, ls, find, grep)]
