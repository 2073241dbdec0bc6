"""The ``runtime`` tool group: ``exec`` (shell commands, gated) and ``process`` (background runs).

Unlike the file tools this group keeps state (running processes, the "allow always"
store, the sandbox's temp dirs) and needs the plugin context: the environment commands
start from, the state directory, and ``on_close`` to kill what still runs when the kernel
shuts down.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from clawbot import Tool
    from clawbot.types import PluginContext

    from clawbot_tools.config import ToolsSettings

NEEDS_CONTEXT = True  # registry.all_tools passes the PluginContext


def tools(settings: ToolsSettings, ctx: PluginContext | None = None) -> list[Tool]:
    """``ctx=None`` (outside a kernel): this process's environment, nothing remembered."""
    from clawbot_tools.runtime import exec as exec_tool
    from clawbot_tools.runtime import process as process_tool
    from clawbot_tools.runtime.context import RuntimeContext

    rt = RuntimeContext.build(
        settings,
        env=ctx.env if ctx is not None else None,
        state_dir=ctx.state_dir if ctx is not None else None,
    )
    if ctx is not None:
        ctx.on_close(rt.aclose)
    return [exec_tool.make_tool(rt), process_tool.make_tool(rt)]
