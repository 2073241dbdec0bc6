"""The prompt-tools plugin's hook: the adapter the kernel uses for models without native tools."""

from __future__ import annotations

from clawbot import hookimpl
from clawbot.types import PluginContext, ToolCallAdapter

from clawbot_prompt_tools.adapter import PromptToolCalling


@hookimpl
def clawbot_tool_call_adapters(ctx: PluginContext) -> list[ToolCallAdapter]:
    return [PromptToolCalling()]
