"""Render a :class:`Reply` as an OpenAI Responses API response (JSON or typed SSE events).

Thinking becomes a ``reasoning`` output item with a summary; ``max_tokens`` replies end as
``status: "incomplete"`` (streaming: ``response.incomplete``), as the real API does.
"""

from __future__ import annotations

import time
from typing import Any

from clawbot.testing.fake_llm.script import CountedUsage, RecordedRequest, Reply, new_id, rough_tokens
from clawbot.testing.fake_llm.sse import chunks, sse

DEFAULT_MODEL = "gpt-fake-1"


def usage_json(usage: CountedUsage, reply: Reply) -> dict[str, Any]:
    total_input = usage.input_tokens + usage.cache_read_tokens + usage.cache_write_tokens
    reasoning = min(usage.output_tokens, rough_tokens(reply.thinking)) if reply.thinking else 0
    return {
        "input_tokens": total_input,
        "input_tokens_details": {"cached_tokens": usage.cache_read_tokens, "cache_write_tokens": usage.cache_write_tokens},
        "output_tokens": usage.output_tokens,
        "output_tokens_details": {"reasoning_tokens": reasoning},
        "total_tokens": total_input + usage.output_tokens,
    }


def _items(reply: Reply) -> list[dict[str, Any]]:
    """The completed output items: reasoning, message, function calls."""
    items: list[dict[str, Any]] = []
    if reply.thinking is not None:
        items.append(
            {
                "id": new_id("rs_", 32),
                "type": "reasoning",
                "summary": [{"type": "summary_text", "text": reply.thinking}] if reply.thinking else [],
                "status": "completed",
            }
        )
    if reply.text or not reply.tool_calls:
        items.append(
            {
                "id": new_id("msg_", 32),
                "type": "message",
                "status": "completed",
                "role": "assistant",
                "content": [{"type": "output_text", "text": reply.text, "annotations": [], "logprobs": []}],
            }
        )
    for call in reply.tool_calls:
        items.append(
            {
                "id": new_id("fc_", 32),
                "type": "function_call",
                "status": "completed",
                "arguments": call.arguments_json,
                "call_id": call.id or new_id("call_"),
                "name": call.name,
            }
        )
    return items


def _response(reply: Reply, request: RecordedRequest, response_id: str, created: int) -> dict[str, Any]:
    body = request.body if isinstance(request.body, dict) else {}
    return {
        "id": response_id,
        "object": "response",
        "created_at": created,
        "status": "in_progress",
        "background": False,
        "error": None,
        "incomplete_details": None,
        "instructions": body.get("instructions"),
        "max_output_tokens": body.get("max_output_tokens"),
        "model": reply.model or request.model or DEFAULT_MODEL,
        "output": [],
        "parallel_tool_calls": body.get("parallel_tool_calls", True),
        "previous_response_id": body.get("previous_response_id"),
        "reasoning": body.get("reasoning") or {"effort": None, "summary": None},
        "store": body.get("store", True),
        "temperature": body.get("temperature", 1.0),
        "text": body.get("text") or {"format": {"type": "text"}},
        "tool_choice": body.get("tool_choice", "auto"),
        "tools": body.get("tools", []),
        "top_p": body.get("top_p", 1.0),
        "truncation": body.get("truncation", "disabled"),
        "usage": None,
        "user": None,
        "metadata": body.get("metadata") or {},
    }


def _finish(response: dict[str, Any], reply: Reply, usage: CountedUsage, items: list[dict[str, Any]]) -> dict[str, Any]:
    done = dict(response, output=items, usage=usage_json(usage, reply), completed_at=int(time.time()))
    if reply.effective_stop_reason == "max_tokens":
        done.update(status="incomplete", incomplete_details={"reason": "max_output_tokens"}, completed_at=None)
    elif reply.effective_stop_reason == "refusal":
        done.update(status="incomplete", incomplete_details={"reason": "content_filter"}, completed_at=None)
    else:
        done["status"] = "completed"
    return done


def render_response(reply: Reply, request: RecordedRequest) -> dict[str, Any]:
    usage = reply.resolved_usage(request.body)
    response = _response(reply, request, new_id("resp_", 40), int(time.time()))
    return _finish(response, reply, usage, _items(reply))


def render_stream(reply: Reply, request: RecordedRequest) -> list[bytes]:
    """``response.created`` … ``response.completed`` (or ``response.incomplete``)."""
    usage = reply.resolved_usage(request.body)
    response = _response(reply, request, new_id("resp_", 40), int(time.time()))
    items = _items(reply)
    frames: list[bytes] = []

    def emit(event_type: str, **fields: Any) -> None:
        frames.append(sse({"type": event_type, "sequence_number": len(frames), **fields}, event_type))

    emit("response.created", response=response)
    emit("response.in_progress", response=response)
    for index, item in enumerate(items):
        item_id = item["id"]
        ids = {"item_id": item_id, "output_index": index}
        if item["type"] == "reasoning":
            emit("response.output_item.added", output_index=index, item=dict(item, summary=[], status="in_progress"))
            for summary_index, part in enumerate(item["summary"]):
                emit("response.reasoning_summary_part.added", **ids, summary_index=summary_index, part=dict(part, text=""))
                for piece in chunks(part["text"]):
                    emit("response.reasoning_summary_text.delta", **ids, summary_index=summary_index, delta=piece)
                emit("response.reasoning_summary_text.done", **ids, summary_index=summary_index, text=part["text"])
                emit("response.reasoning_summary_part.done", **ids, summary_index=summary_index, part=part)
        elif item["type"] == "message":
            part = item["content"][0]
            emit("response.output_item.added", output_index=index, item=dict(item, content=[], status="in_progress"))
            emit("response.content_part.added", **ids, content_index=0, part=dict(part, text=""))
            for piece in chunks(part["text"]):
                emit("response.output_text.delta", **ids, content_index=0, delta=piece, logprobs=[])
            emit("response.output_text.done", **ids, content_index=0, text=part["text"], logprobs=[])
            emit("response.content_part.done", **ids, content_index=0, part=part)
        else:
            emit("response.output_item.added", output_index=index, item=dict(item, arguments="", status="in_progress"))
            for piece in chunks(item["arguments"], 8):
                emit("response.function_call_arguments.delta", **ids, delta=piece)
            emit("response.function_call_arguments.done", **ids, name=item["name"], arguments=item["arguments"])
        emit("response.output_item.done", output_index=index, item=item)
    done = _finish(response, reply, usage, items)
    emit("response.completed" if done["status"] == "completed" else "response.incomplete", response=done)
    return frames
