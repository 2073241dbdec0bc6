"""clawbot-prompt-tools: tool calling for models that take no ``tools`` parameter.

A provider reports such a model with ``ModelInfo.native_tools = False`` (the openai plugin's
``providers.<name>.native_tools = false``). The kernel then passes each request through this
plugin's :class:`~clawbot_prompt_tools.adapter.PromptToolCalling` (``clawbot_tool_call_adapters``):
the tools go into the system prompt (:mod:`clawbot_prompt_tools.rendering`) and the
``<tool_call>`` blocks the reply makes become tool calls again (:mod:`clawbot_prompt_tools.calls`),
so the turn never knows the difference.
"""
