"""The file tools (group ``fs``): read, write, edit, apply_patch, ls, find, grep, confined to the workspace.

Tool handlers are synchronous and run in a worker thread under the tool's timeout; a thread
cannot be killed, so each tool bounds its own time and memory (see the limits in each module).
"""

from __future__ import annotations

from clawbot import Tool

from clawbot_tools.config import ToolsSettings


def tools(settings: ToolsSettings) -> list[Tool]:
    from clawbot_tools.fs import apply_patch, edit, find, grep, ls, read, write

    return [module.make_tool(settings) for module in (read, write, edit, apply_patch, ls, find, grep)]
