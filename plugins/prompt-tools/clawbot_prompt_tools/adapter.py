"""Prompt-based tool calling as the kernel asks for it (:class:`~clawbot.types.ToolCallAdapter`)."""

from __future__ import annotations

from clawbot.types import Message, ModelRequest, ToolCallAdapter

from clawbot_prompt_tools import rendering


class PromptToolCalling(ToolCallAdapter):
    """Tools in the system prompt, calls read back from ``<tool_call>`` blocks."""

    name = "prompt-tools"

    def encode(self, request: ModelRequest) -> ModelRequest:
        return rendering.encode(request)

    def decode(self, reply: Message) -> Message:
        return rendering.decode(reply)
