"""The prompt-tools plugin's hook: the adapter the kernel uses for models without native tools.

Only ``hookimpl`` is imported at module level: plugin discovery stays cheap, and the adapter
(the value types, the provider kit) loads when a kernel asks for it.
"""

from __future__ import annotations

from clawbot import hookimpl


@hookimpl
def clawbot_tool_call_adapters(ctx):
    from clawbot_prompt_tools.adapter import PromptToolCalling

    return [PromptToolCalling()]
