"""Provider-neutral messages <-> Anthropic Messages API.

Plain dicts in, plain dicts out: nothing here imports the SDK, so the translation is cheap
to load and easy to test. :func:`request_params` builds the keyword arguments of
``client.messages.create``; :class:`StreamAccumulator` folds the streamed events (SDK
objects or dicts) back into a :class:`~clawbot.types.Message`.

The system prompt is sent as two text blocks: the stable part carries
``cache_control: {"type": "ephemeral"}`` and the volatile part (time, channel, ...) follows
without it, so the cached prefix (tools + stable system text) survives volatile changes.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from clawbot.providerkit import decoded_tool_arguments
from clawbot.providerkit import field as _get
from clawbot.providerkit import json_plain as _plain
from clawbot.providerkit import parse_tool_arguments as parse_arguments
from clawbot.types import (
    ImageBlock,
    Message,
    ModelRequest,
    Role,
    StopReason,
    SystemPrompt,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolSpec,
    Usage,
)

#: Extended-thinking token budget per thinking level ("off": no thinking parameter at all).
THINKING_BUDGETS: dict[str, int] = {
    "minimal": 1024,
    "low": 4096,
    "medium": 10_000,
    "high": 16_000,
    "xhigh": 32_000,
}

CACHE_CONTROL: dict[str, str] = {"type": "ephemeral"}

STOP_REASONS: dict[str, StopReason] = {
    "end_turn": StopReason.END_TURN,
    "tool_use": StopReason.TOOL_USE,
    "max_tokens": StopReason.MAX_TOKENS,
    "model_context_window_exceeded": StopReason.MAX_TOKENS,
    "stop_sequence": StopReason.STOP_SEQUENCE,
    "pause_turn": StopReason.END_TURN,
    "refusal": StopReason.END_TURN,
}


def thinking_budget(level: str) -> int | None:
    """Budget tokens of a thinking level; ``None`` for "off" (or anything unknown)."""
    return THINKING_BUDGETS.get((level or "off").lower())


# ------------------------------------------------------------------ neutral -> wire


def system_blocks(system: SystemPrompt) -> list[dict[str, Any]]:
    """The stable part with the cache breakpoint, then the volatile part without one."""
    blocks: list[dict[str, Any]] = []
    if system.stable:
        blocks.append({"type": "text", "text": system.stable, "cache_control": dict(CACHE_CONTROL)})
    if system.volatile:
        blocks.append({"type": "text", "text": system.volatile})
    return blocks


def tool_param(tool: ToolSpec) -> dict[str, Any]:
    return {"name": tool.name, "description": tool.description, "input_schema": _plain(tool.parameters)}


def image_block(block: ImageBlock) -> dict[str, Any]:
    if block.data is not None:
        source = {"type": "base64", "media_type": block.media_type, "data": block.data}
    else:
        source = {"type": "url", "url": block.url or ""}
    return {"type": "image", "source": source}


def _user_blocks(message: Message) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for block in message.content:
        if isinstance(block, TextBlock):
            if block.text:
                out.append({"type": "text", "text": block.text})
        elif isinstance(block, ImageBlock):
            out.append(image_block(block))
        # tool calls and thinking never appear in user turns; drop them rather than fail
    return out


def _assistant_blocks(message: Message) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for block in message.content:
        if isinstance(block, ThinkingBlock):
            if block.redacted:
                out.append({"type": "redacted_thinking", "data": block.text})
            elif block.signature:
                out.append({"type": "thinking", "thinking": block.text, "signature": block.signature})
            # unsigned thinking (from another provider) cannot be replayed: Anthropic rejects it
        elif isinstance(block, TextBlock):
            if block.text:
                out.append({"type": "text", "text": block.text})
        elif isinstance(block, ToolCallBlock):
            out.append({"type": "tool_use", "id": block.id, "name": block.name, "input": dict(block.arguments)})
    return out


def _tool_result_block(message: Message) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": message.tool_call_id or ""}
    content = _user_blocks(message)
    if content:
        block["content"] = content
    if message.is_error:
        block["is_error"] = True
    return block


def messages_param(messages: Iterable[Message]) -> list[dict[str, Any]]:
    """Wire messages, roles alternating.

    A tool_result Message becomes a ``tool_result`` block in a user message; consecutive
    messages of the same wire role (several tool results, a tool result then a user
    message) merge into one, tool results first as the API requires.
    """
    out: list[dict[str, Any]] = []
    for message in messages:
        if message.role is Role.ASSISTANT:
            role, blocks = "assistant", _assistant_blocks(message)
        elif message.role is Role.TOOL_RESULT:
            role, blocks = "user", [_tool_result_block(message)]
        else:
            role, blocks = "user", _user_blocks(message)
        if not blocks:
            continue
        if out and out[-1]["role"] == role:
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": role, "content": blocks})
    return out


def request_params(request: ModelRequest, *, max_tokens: int) -> dict[str, Any]:
    """Keyword arguments of ``messages.create`` (without ``stream``)."""
    params: dict[str, Any] = {
        "model": request.model,
        "max_tokens": max_tokens,
        "messages": messages_param(request.messages),
    }
    system = system_blocks(request.system)
    if system:
        params["system"] = system
    if request.tools:
        params["tools"] = [tool_param(t) for t in request.tools]
    budget = thinking_budget(request.thinking)
    if budget is not None:
        if budget >= max_tokens:  # the budget must leave room for the answer
            params["max_tokens"] = budget + max_tokens
        params["thinking"] = {"type": "enabled", "budget_tokens": budget}
    return params


# ------------------------------------------------------------------ wire -> neutral


class _Part:
    """One content block while it streams in."""

    def __init__(self, kind: str, **fields: Any) -> None:
        self.kind = kind
        self.fields = fields
        self.text: list[str] = []
        self.signature: str | None = fields.get("signature")

    def block(self) -> TextBlock | ToolCallBlock | ThinkingBlock | None:
        text = "".join(self.text)
        if self.kind == "text":
            return TextBlock(text) if text else None
        if self.kind == "tool_use":
            if text:
                arguments, raw = parse_arguments(text)
            else:  # the whole input in the start event, already decoded by the SDK
                arguments, raw = decoded_tool_arguments(self.fields.get("input"))
            return ToolCallBlock(self.fields["id"], self.fields["name"], arguments, raw)
        if self.kind == "thinking":
            return ThinkingBlock(text, signature=self.signature)
        if self.kind == "redacted_thinking":
            return ThinkingBlock(self.fields.get("data") or "", redacted=True)
        return None


class StreamAccumulator:
    """Folds ``RawMessageStreamEvent``s into one assistant message.

    :meth:`feed` returns the text delta an event carries (for ``on_text``), else ``None``.
    :attr:`complete` is true once ``message_stop`` arrived: a stream that ends before that
    was cut off and must not be taken for an answer.
    """

    def __init__(self) -> None:
        self.parts: dict[int, _Part] = {}
        self.input_tokens = 0
        self.output_tokens = 0
        self.cache_read = 0
        self.cache_write = 0
        self.stop_reason: str | None = None
        self.model: str | None = None
        self.started = False
        self.complete = False

    def _usage(self, usage: Any) -> None:
        if usage is None:
            return
        for attr, key in (
            ("input_tokens", "input_tokens"),
            ("output_tokens", "output_tokens"),
            ("cache_read", "cache_read_input_tokens"),
            ("cache_write", "cache_creation_input_tokens"),
        ):
            value = _get(usage, key)
            if value is not None:
                setattr(self, attr, int(value))

    def feed(self, event: Any) -> str | None:
        kind = _get(event, "type")
        if kind == "message_start":
            self.started = True
            message = _get(event, "message")
            self.model = _get(message, "model")
            self._usage(_get(message, "usage"))
        elif kind == "content_block_start":
            block = _get(event, "content_block")
            btype = _get(block, "type")
            fields = {k: _get(block, k) for k in ("id", "name", "input", "signature", "data")}
            part = _Part(btype, **fields)
            initial = _get(block, "text") if btype == "text" else _get(block, "thinking") if btype == "thinking" else None
            if initial:
                part.text.append(initial)
            self.parts[int(_get(event, "index", len(self.parts)))] = part
            if btype == "text" and initial:
                return initial
        elif kind == "content_block_delta":
            part = self.parts.get(int(_get(event, "index", 0)))
            delta = _get(event, "delta")
            dtype = _get(delta, "type")
            if part is None:
                return None
            if dtype == "text_delta":
                text = _get(delta, "text") or ""
                part.text.append(text)
                return text or None
            if dtype == "input_json_delta":
                part.text.append(_get(delta, "partial_json") or "")
            elif dtype == "thinking_delta":
                part.text.append(_get(delta, "thinking") or "")
            elif dtype == "signature_delta":
                part.signature = (part.signature or "") + (_get(delta, "signature") or "")
        elif kind == "message_delta":
            reason = _get(_get(event, "delta"), "stop_reason")
            if reason:
                self.stop_reason = reason
            self._usage(_get(event, "usage"))
        elif kind == "message_stop":
            self.complete = True
        return None

    @property
    def usage(self) -> Usage:
        return Usage(self.input_tokens, self.output_tokens, self.cache_read, self.cache_write)

    def message(self, *, provider: str, model: str) -> Message:
        blocks = [part.block() for _, part in sorted(self.parts.items())]
        content = tuple(b for b in blocks if b is not None)
        if self.stop_reason in STOP_REASONS:
            stop = STOP_REASONS[self.stop_reason]
        else:
            stop = StopReason.TOOL_USE if any(isinstance(b, ToolCallBlock) for b in content) else StopReason.END_TURN
        return Message(
            Role.ASSISTANT,
            content,
            provider=provider,
            model=model,
            usage=self.usage,
            stop_reason=stop,
        )


__all__ = [
    "CACHE_CONTROL",
    "STOP_REASONS",
    "THINKING_BUDGETS",
    "StreamAccumulator",
    "image_block",
    "messages_param",
    "parse_arguments",
    "request_params",
    "system_blocks",
    "thinking_budget",
    "tool_param",
]
