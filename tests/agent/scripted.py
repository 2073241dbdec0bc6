"""A provider that replays scripted replies and records requests: the loop's unit-test double.

(End-to-end tests use the real SDKs against clawbot.testing's fake LLM server instead.)
"""

from __future__ import annotations

import asyncio

from clawbot import LLMProvider, Message, ModelInfo, ModelRequest, Role, StopReason, TextBlock, ToolCallBlock, Usage


def call(name: str, call_id: str, raw: str | None = None, **arguments) -> ToolCallBlock:
    return ToolCallBlock(id=call_id, name=name, arguments=arguments, raw_arguments=raw)


class ScriptedProvider(LLMProvider):
    name = "scripted"

    def __init__(self, *replies: str | list[ToolCallBlock], context_window: int = 200_000, delay: float = 0.0) -> None:
        self.replies = list(replies)
        self.requests: list[ModelRequest] = []
        self.context_window = context_window
        self.delay = delay

    def model_info(self, model_id: str) -> ModelInfo:
        return ModelInfo(model_id, context_window=self.context_window)

    async def complete(self, request, on_text=None):
        self.requests.append(request)
        if self.delay:
            await asyncio.sleep(self.delay)
        reply = self.replies.pop(0) if self.replies else "done"
        if isinstance(reply, str):
            return Message(Role.ASSISTANT, (TextBlock(reply),), usage=Usage(10, 2), stop_reason=StopReason.END_TURN)
        return Message(Role.ASSISTANT, tuple(reply), usage=Usage(10, 2), stop_reason=StopReason.TOOL_USE)
