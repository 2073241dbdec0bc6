"""Render a :class:`Reply` as an Anthropic Messages API response (JSON or SSE events)."""

from __future__ import annotations

import json
from typing import Any

from clawbot.testing.fake_llm.script import CountedUsage, RecordedRequest, Reply, new_id, rough_tokens
from clawbot.testing.fake_llm.sse import chunks, sse

DEFAULT_MODEL = "claude-fake-1"


def _usage(usage: CountedUsage, *, output_tokens: int | None = None) -> dict[str, Any]:
    return {
        "input_tokens": usage.input_tokens,
        "cache_creation_input_tokens": usage.cache_write_tokens,
        "cache_read_input_tokens": usage.cache_read_tokens,
        "output_tokens": usage.output_tokens if output_tokens is None else output_tokens,
        "service_tier": "standard",
    }


def _blocks(reply: Reply) -> list[dict[str, Any]]:
    """Content blocks in the order the model emits them: thinking, text, tool calls."""
    blocks: list[dict[str, Any]] = []
    if reply.thinking is not None:
        blocks.append({"type": "thinking", "thinking": reply.thinking, "signature": new_id("EqQBCkgIARAB", 48)})
    if reply.text or not (reply.tool_calls or reply.thinking is not None):
        blocks.append({"type": "text", "text": reply.text, "citations": None})
    for call in reply.tool_calls:
        blocks.append(
            {
                "type": "tool_use",
                "id": call.id or new_id("toolu_01", 22),
                "name": call.name,
                "input": call.arguments_object,
                # Kept for streaming: the exact (possibly malformed) JSON text.
                "_json": call.arguments_json,
            }
        )
    return blocks


def _message(reply: Reply, request: RecordedRequest, usage: CountedUsage, content: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "id": new_id("msg_01", 22),
        "type": "message",
        "role": "assistant",
        "model": reply.model or request.model or DEFAULT_MODEL,
        "content": content,
        "stop_reason": reply.effective_stop_reason,
        "stop_sequence": None,
        "usage": _usage(usage),
    }


def render_message(reply: Reply, request: RecordedRequest) -> dict[str, Any]:
    usage = reply.resolved_usage(request.body)
    content = [{k: v for k, v in block.items() if k != "_json"} for block in _blocks(reply)]
    return _message(reply, request, usage, content)


def render_stream(reply: Reply, request: RecordedRequest) -> list[bytes]:
    """The SSE frames of a streamed reply, ``message_start`` through ``message_stop``."""
    usage = reply.resolved_usage(request.body)
    start = _message(reply, request, usage, [])
    start.update(stop_reason=None)
    start["usage"] = _usage(usage, output_tokens=1)
    events = [sse({"type": "message_start", "message": start}, "message_start"), sse({"type": "ping"}, "ping")]

    def emit(event_type: str, **fields: Any) -> None:
        events.append(sse({"type": event_type, **fields}, event_type))

    for index, block in enumerate(_blocks(reply)):
        if block["type"] == "thinking":
            emit("content_block_start", index=index, content_block={"type": "thinking", "thinking": "", "signature": ""})
            for piece in chunks(block["thinking"]):
                emit("content_block_delta", index=index, delta={"type": "thinking_delta", "thinking": piece})
            emit("content_block_delta", index=index, delta={"type": "signature_delta", "signature": block["signature"]})
        elif block["type"] == "text":
            emit("content_block_start", index=index, content_block={"type": "text", "text": "", "citations": None})
            for piece in chunks(block["text"]):
                emit("content_block_delta", index=index, delta={"type": "text_delta", "text": piece})
        else:
            start_block = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            emit("content_block_start", index=index, content_block=start_block)
            for piece in chunks(block["_json"], 8):
                emit("content_block_delta", index=index, delta={"type": "input_json_delta", "partial_json": piece})
        emit("content_block_stop", index=index)

    delta_usage = _usage(usage)
    delta_usage.pop("service_tier")
    emit("message_delta", delta={"stop_reason": reply.effective_stop_reason, "stop_sequence": None}, usage=delta_usage)
    emit("message_stop")
    return events


def count_tokens(body: Any) -> dict[str, Any]:
    """``POST /v1/messages/count_tokens``: a rough count of what would be sent."""
    if not isinstance(body, dict):
        return {"input_tokens": 1}
    relevant = {k: body.get(k) for k in ("system", "messages", "tools") if k in body}
    return {"input_tokens": rough_tokens(json.dumps(relevant, ensure_ascii=False))}


def models_list(models: list[str]) -> dict[str, Any]:
    data = [{"type": "model", "id": name, "display_name": name, "created_at": "2025-01-01T00:00:00Z"} for name in models]
    return {"data": data, "has_more": False, "first_id": models[0] if models else None, "last_id": models[-1] if models else None}
