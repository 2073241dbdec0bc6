"""The file tools (group ``fs``): read, write, edit, apply_patch, ls, find, grep, confined to the workspace.

Tool handlers are synchronous and run in a worker thread under the tool's timeout; a thread
cannot be killed, so each tool bounds its own time and memory (see the limits in each module).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from clawbot import Tool

from clawbot_tools.config import ToolsSettings

if TYPE_CHECKING:
    from clawbot.types import PluginContext

NEEDS_CONTEXT = True  # registry.all_tools passes the PluginContext: the state folder the tools refuse


def tools(settings: ToolsSettings, ctx: PluginContext | None = None) -> list[Tool]:
    """``ctx=None`` (outside a kernel): no state folder to refuse."""
    from clawbot_tools.fs import apply_patch, edit, find, grep, ls, read, write
    from clawbot_tools.fs.paths import hidden_folders

    hidden = hidden_folders(ctx.state_dir if ctx is not None else None)
    reading_and_writing = [module.make_tool(settings, hidden) for module in (read, write, edit, apply_patch)]
    return [*reading_and_writing, *(module.make_tool(settings) for module in (ls, find, grep))]
