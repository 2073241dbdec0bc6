"""Provider-neutral messages <-> OpenAI Chat Completions (also Ollama, vLLM, LM Studio...).

Plain dicts, no SDK import. The system prompt is one ``system`` message holding the stable
then the volatile text: OpenAI caches prompt prefixes on its own, so keeping the stable
part first is all the cache boundary needs.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from clawbot.providerkit import field as get
from clawbot.providerkit import json_plain as plain
from clawbot.providerkit import parse_tool_arguments as parse_arguments
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

#: clawbot thinking level -> ``reasoning_effort`` ("off": parameter omitted).
REASONING_EFFORT: dict[str, str] = {
    "minimal": "minimal",
    "low": "low",
    "medium": "medium",
    "high": "high",
    "xhigh": "xhigh",
}

FINISH_REASONS: dict[str, StopReason] = {
    "stop": StopReason.END_TURN,
    "tool_calls": StopReason.TOOL_USE,
    "function_call": StopReason.TOOL_USE,
    "length": StopReason.MAX_TOKENS,
    "content_filter": StopReason.END_TURN,
}


def reasoning_effort(level: str) -> str | None:
    return REASONING_EFFORT.get((level or "off").lower())


def arguments_text(block: ToolCallBlock) -> str:
    """What the model sent: the raw text when it was malformed, else the JSON."""
    if block.raw_arguments is not None and not block.arguments:
        return block.raw_arguments
    return json.dumps(block.arguments, ensure_ascii=False)


def image_url(block: ImageBlock) -> str:
    if block.data is not None:
        return f"data:{block.media_type};base64,{block.data}"
    return block.url or ""


def tool_result_text(message: Message) -> str:
    text = "".join(b.text for b in message.content if isinstance(b, TextBlock))
    return f"Error: {text}" if message.is_error and not text.lower().startswith("error") else text


# ------------------------------------------------------------------ neutral -> wire


def tool_param(tool: ToolSpec) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {"name": tool.name, "description": tool.description, "parameters": plain(tool.parameters)},
    }


def _user_content(message: Message) -> str | list[dict[str, Any]]:
    blocks = [b for b in message.content if isinstance(b, TextBlock | ImageBlock)]
    if all(isinstance(b, TextBlock) for b in blocks):
        return "".join(b.text for b in blocks)  # type: ignore[union-attr]
    parts: list[dict[str, Any]] = []
    for block in blocks:
        if isinstance(block, TextBlock):
            parts.append({"type": "text", "text": block.text})
        else:
            parts.append({"type": "image_url", "image_url": {"url": image_url(block)}})
    return parts


def _assistant(message: Message) -> dict[str, Any] | None:
    text = message.text
    calls = [{"id": b.id, "type": "function", "function": {"name": b.name, "arguments": arguments_text(b)}} for b in message.tool_calls]
    if not text and not calls:
        return None
    out: dict[str, Any] = {"role": "assistant", "content": text or None}
    if calls:
        out["tool_calls"] = calls
    return out


def messages_param(system_text: str, messages: Iterable[Message]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    if system_text:
        out.append({"role": "system", "content": system_text})
    pending_images: list[dict[str, Any]] = []

    def flush_images() -> None:
        # tool messages carry text only: images a tool returned follow as a user message
        if pending_images:
            out.append({"role": "user", "content": [{"type": "text", "text": "(images returned by the tools above)"}, *pending_images]})
            pending_images.clear()

    for message in messages:
        if message.role is Role.TOOL_RESULT:
            out.append({"role": "tool", "tool_call_id": message.tool_call_id or "", "content": tool_result_text(message)})
            pending_images.extend({"type": "image_url", "image_url": {"url": image_url(b)}} for b in message.content if isinstance(b, ImageBlock))
            continue
        flush_images()
        if message.role is Role.ASSISTANT:
            item = _assistant(message)
            if item is not None:
                out.append(item)
        else:
            out.append({"role": "user", "content": _user_content(message)})
    flush_images()
    return out


def request_params(request: ModelRequest, *, native_tools: bool = True, max_tokens_key: str = "max_completion_tokens") -> dict[str, Any]:
    """Keyword arguments of ``chat.completions.create`` (streaming, with usage)."""
    params: dict[str, Any] = {
        "model": request.model,
        "messages": messages_param(request.system.text, request.messages),
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    if request.tools and native_tools:
        params["tools"] = [tool_param(t) for t in request.tools]
    effort = reasoning_effort(request.thinking)
    if effort is not None:
        params["reasoning_effort"] = effort
    if request.max_output_tokens:
        params[max_tokens_key] = request.max_output_tokens
    return params


# ------------------------------------------------------------------ wire -> neutral


def usage_from(usage: Any) -> Usage:
    """OpenAI counts cached tokens inside ``prompt_tokens``; clawbot's input is the rest."""
    prompt = int(get(usage, "prompt_tokens", 0) or 0)
    output = int(get(usage, "completion_tokens", 0) or 0)
    details = get(usage, "prompt_tokens_details")
    cached = int(get(details, "cached_tokens", 0) or 0)
    written = int(get(details, "cache_write_tokens", 0) or 0)
    return Usage(max(0, prompt - cached - written), output, cached, written)


class _Call:
    def __init__(self) -> None:
        self.id = ""
        self.name = ""
        self.arguments: list[str] = []


class ChatAccumulator:
    """Folds ``ChatCompletionChunk``s into one assistant message.

    :attr:`complete` turns true with the first ``finish_reason``: a stream that ends
    without one was cut off.
    """

    def __init__(self) -> None:
        self.text: list[str] = []
        self.reasoning: list[str] = []
        self.calls: dict[int, _Call] = {}
        self.finish_reason: str | None = None
        self.usage: Usage | None = None
        self.complete = False

    def feed(self, chunk: Any) -> str | None:
        usage = get(chunk, "usage")
        if usage is not None:
            self.usage = usage_from(usage)
        emitted: list[str] = []
        for choice in get(chunk, "choices", None) or ():
            if int(get(choice, "index", 0) or 0) != 0:
                continue
            delta = get(choice, "delta")
            if delta is not None:
                content = get(delta, "content")
                if content:
                    self.text.append(content)
                    emitted.append(content)
                thought = get(delta, "reasoning_content") or get(delta, "reasoning")
                if isinstance(thought, str) and thought:
                    self.reasoning.append(thought)
                for call in get(delta, "tool_calls", None) or ():
                    index = int(get(call, "index", len(self.calls)) or 0)
                    entry = self.calls.setdefault(index, _Call())
                    if get(call, "id"):
                        entry.id = get(call, "id")
                    function = get(call, "function")
                    if get(function, "name") and not entry.name:
                        entry.name = get(function, "name")
                    if get(function, "arguments"):
                        entry.arguments.append(get(function, "arguments"))
            reason = get(choice, "finish_reason")
            if reason:
                self.finish_reason = reason
                self.complete = True
        return "".join(emitted) or None

    def message(self, *, provider: str, model: str) -> Message:
        content: list[Any] = []
        if self.reasoning:
            content.append(ThinkingBlock("".join(self.reasoning)))
        if self.text:
            content.append(TextBlock("".join(self.text)))
        for index, call in sorted(self.calls.items()):
            arguments, raw = parse_arguments("".join(call.arguments))
            content.append(ToolCallBlock(call.id or f"call_{index}", call.name, arguments, raw))
        stop = FINISH_REASONS.get(self.finish_reason or "", StopReason.END_TURN)
        if self.calls and stop is StopReason.END_TURN:
            stop = StopReason.TOOL_USE  # some compatible servers say "stop" after tool calls
        return Message(Role.ASSISTANT, tuple(content), provider=provider, model=model, usage=self.usage or Usage(), stop_reason=stop)


__all__ = [
    "ChatAccumulator",
    "FINISH_REASONS",
    "REASONING_EFFORT",
    "arguments_text",
    "get",
    "image_url",
    "messages_param",
    "parse_arguments",
    "plain",
    "reasoning_effort",
    "request_params",
    "tool_param",
    "tool_result_text",
    "usage_from",
]
