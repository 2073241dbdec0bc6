"""Provider-neutral messages <-> the OpenAI Responses API.

Plain dicts, no SDK import. Requests are stateless (``store: false``): the whole history
goes as ``input`` items every time, tool calls as ``function_call`` items and tool results
as ``function_call_output`` items; the system prompt is ``instructions``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from clawbot.types import (
    ImageBlock,
    Message,
    ModelRequest,
    Role,
    StopReason,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolSpec,
    Usage,
)

from clawbot_openai.wire_chat import arguments_text, get, image_url, parse_arguments, plain, reasoning_effort, tool_result_text


def tool_param(tool: ToolSpec) -> dict[str, Any]:
    return {
        "type": "function",
        "name": tool.name,
        "description": tool.description,
        "parameters": plain(tool.parameters),
        "strict": False,
    }


def _user_item(message: Message) -> dict[str, Any] | None:
    parts: list[dict[str, Any]] = []
    for block in message.content:
        if isinstance(block, TextBlock) and block.text:
            parts.append({"type": "input_text", "text": block.text})
        elif isinstance(block, ImageBlock):
            parts.append({"type": "input_image", "image_url": image_url(block), "detail": "auto"})
    return {"role": "user", "content": parts} if parts else None


def input_items(messages: Iterable[Message]) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    for message in messages:
        if message.role is Role.ASSISTANT:
            text = message.text
            if text:
                items.append({"role": "assistant", "content": text})
            for call in message.tool_calls:
                items.append({"type": "function_call", "call_id": call.id, "name": call.name, "arguments": arguments_text(call)})
        elif message.role is Role.TOOL_RESULT:
            items.append({"type": "function_call_output", "call_id": message.tool_call_id or "", "output": tool_result_text(message)})
            images = [b for b in message.content if isinstance(b, ImageBlock)]
            if images:
                item = _user_item(Message(Role.USER, (TextBlock("(images returned by the tool above)"), *images)))
                if item is not None:
                    items.append(item)
        else:
            item = _user_item(message)
            if item is not None:
                items.append(item)
    return items


def request_params(request: ModelRequest, *, native_tools: bool = True) -> dict[str, Any]:
    """Keyword arguments of ``responses.create`` (streaming, stateless)."""
    params: dict[str, Any] = {
        "model": request.model,
        "input": input_items(request.messages),
        "stream": True,
        "store": False,
    }
    if request.system.text:
        params["instructions"] = request.system.text
    if request.tools and native_tools:
        params["tools"] = [tool_param(t) for t in request.tools]
    effort = reasoning_effort(request.thinking)
    if effort is not None:
        params["reasoning"] = {"effort": effort, "summary": "auto"}
    if request.max_output_tokens:
        params["max_output_tokens"] = request.max_output_tokens
    return params


# ------------------------------------------------------------------ wire -> neutral


def usage_from(usage: Any) -> Usage:
    """``input_tokens`` includes the cached tokens; clawbot's input is the rest."""
    total = int(get(usage, "input_tokens", 0) or 0)
    output = int(get(usage, "output_tokens", 0) or 0)
    details = get(usage, "input_tokens_details")
    cached = int(get(details, "cached_tokens", 0) or 0)
    written = int(get(details, "cache_write_tokens", 0) or 0)
    return Usage(max(0, total - cached - written), output, cached, written)


class StreamFailed(Exception):
    """A ``response.failed`` or ``error`` event: (code, message)."""

    def __init__(self, code: str | None, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def _item_blocks(item: Any) -> list[Any]:
    itype = get(item, "type")
    if itype == "message":
        text = "".join(
            get(part, "text", "") or get(part, "refusal", "") or ""
            for part in get(item, "content", None) or ()
            if get(part, "type") in ("output_text", "refusal")
        )
        return [TextBlock(text)] if text else []
    if itype == "function_call":
        arguments, raw = parse_arguments(get(item, "arguments", "") or "")
        return [ToolCallBlock(get(item, "call_id") or get(item, "id") or "", get(item, "name") or "", arguments, raw)]
    if itype == "reasoning":
        summary = "\n\n".join(get(s, "text", "") for s in get(item, "summary", None) or () if get(s, "text"))
        content = "\n\n".join(get(s, "text", "") for s in get(item, "content", None) or () if get(s, "text"))
        text = summary or content
        return [ThinkingBlock(text)] if text else []
    return []


class ResponsesAccumulator:
    """Folds Responses stream events into one assistant message.

    Text deltas go to ``on_text`` as they come; the final content is taken from the
    finished output items. :attr:`complete` turns true on ``response.completed`` or
    ``response.incomplete``; ``response.failed`` and ``error`` raise :class:`StreamFailed`.
    """

    def __init__(self) -> None:
        self.items: dict[int, Any] = {}
        self.final_output: list[Any] | None = None
        self.usage: Usage | None = None
        self.incomplete_reason: str | None = None
        self.complete = False
        self.text_seen: list[str] = []

    def feed(self, event: Any) -> str | None:
        kind = get(event, "type")
        if kind == "response.output_text.delta":
            delta = get(event, "delta", "") or ""
            self.text_seen.append(delta)
            return delta or None
        if kind == "response.output_item.done":
            self.items[int(get(event, "output_index", len(self.items)) or 0)] = get(event, "item")
        elif kind in ("response.completed", "response.incomplete"):
            response = get(event, "response")
            output = get(response, "output", None)
            if output:
                self.final_output = list(output)
            usage = get(response, "usage")
            if usage is not None:
                self.usage = usage_from(usage)
            if kind == "response.incomplete":
                self.incomplete_reason = get(get(response, "incomplete_details"), "reason") or "incomplete"
            self.complete = True
        elif kind == "response.failed":
            error = get(get(event, "response"), "error")
            raise StreamFailed(get(error, "code"), get(error, "message", "") or "response failed")
        elif kind == "error":
            raise StreamFailed(get(event, "code"), get(event, "message", "") or "stream error")
        return None

    def message(self, *, provider: str, model: str) -> Message:
        output = self.final_output if self.final_output is not None else [v for _, v in sorted(self.items.items())]
        content: list[Any] = []
        for item in output:
            content.extend(_item_blocks(item))
        if not any(isinstance(b, TextBlock) for b in content) and self.text_seen:
            content.append(TextBlock("".join(self.text_seen)))
        if self.incomplete_reason == "max_output_tokens":
            stop = StopReason.MAX_TOKENS
        elif any(isinstance(b, ToolCallBlock) for b in content):
            stop = StopReason.TOOL_USE
        else:
            stop = StopReason.END_TURN
        return Message(Role.ASSISTANT, tuple(content), provider=provider, model=model, usage=self.usage or Usage(), stop_reason=stop)


__all__ = ["ResponsesAccumulator", "StreamFailed", "input_items", "request_params", "tool_param", "usage_from"]
