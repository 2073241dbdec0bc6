"""Render a :class:`Reply` as an OpenAI Chat Completions response (JSON or SSE chunks)."""

from __future__ import annotations

import time
from typing import Any

from clawbot.testing.fake_llm.script import CountedUsage, RecordedRequest, Reply, new_id, rough_tokens
from clawbot.testing.fake_llm.sse import chunks, sse

DEFAULT_MODEL = "gpt-fake-1"

FINISH_REASONS = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "refusal": "content_filter",
}


def usage_json(usage: CountedUsage, reasoning_tokens: int) -> dict[str, Any]:
    prompt = usage.input_tokens + usage.cache_read_tokens + usage.cache_write_tokens
    return {
        "prompt_tokens": prompt,
        "completion_tokens": usage.output_tokens,
        "total_tokens": prompt + usage.output_tokens,
        "prompt_tokens_details": {
            "cached_tokens": usage.cache_read_tokens,
            "cache_write_tokens": usage.cache_write_tokens,
            "audio_tokens": 0,
        },
        "completion_tokens_details": {
            "reasoning_tokens": reasoning_tokens,
            "audio_tokens": 0,
            "accepted_prediction_tokens": 0,
            "rejected_prediction_tokens": 0,
        },
    }


def _reasoning_tokens(reply: Reply, usage: CountedUsage) -> int:
    if not reply.thinking:
        return 0
    return min(usage.output_tokens, rough_tokens(reply.thinking))


def _tool_calls(reply: Reply) -> list[dict[str, Any]]:
    return [
        {
            "id": call.id or new_id("call_"),
            "type": "function",
            "function": {"name": call.name, "arguments": call.arguments_json},
        }
        for call in reply.tool_calls
    ]


def _envelope(reply: Reply, request: RecordedRequest, obj: str) -> dict[str, Any]:
    return {
        "id": new_id("chatcmpl-", 29),
        "object": obj,
        "created": int(time.time()),
        "model": reply.model or request.model or DEFAULT_MODEL,
        "service_tier": "default",
        "system_fingerprint": "fp_fake",
    }


def render_completion(reply: Reply, request: RecordedRequest) -> dict[str, Any]:
    usage = reply.resolved_usage(request.body)
    message: dict[str, Any] = {
        "role": "assistant",
        "content": reply.text if (reply.text or not reply.tool_calls) else None,
        "refusal": None,
        "annotations": [],
    }
    if reply.tool_calls:
        message["tool_calls"] = _tool_calls(reply)
    return {
        **_envelope(reply, request, "chat.completion"),
        "choices": [
            {
                "index": 0,
                "message": message,
                "logprobs": None,
                "finish_reason": FINISH_REASONS[reply.effective_stop_reason],
            }
        ],
        "usage": usage_json(usage, _reasoning_tokens(reply, usage)),
    }


def render_stream(reply: Reply, request: RecordedRequest) -> list[bytes]:
    """``data:`` chunks ending with ``data: [DONE]``; a usage chunk when ``stream_options.include_usage``."""
    usage = reply.resolved_usage(request.body)
    body = request.body if isinstance(request.body, dict) else {}
    include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
    envelope = _envelope(reply, request, "chat.completion.chunk")
    frames: list[bytes] = []

    def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> None:
        data = {**envelope, "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}]}
        if include_usage:
            data["usage"] = None
        frames.append(sse(data))

    chunk({"role": "assistant", "content": "" if (reply.text or not reply.tool_calls) else None, "refusal": None})
    for piece in chunks(reply.text):
        chunk({"content": piece})
    for index, call in enumerate(_tool_calls(reply)):
        function = call["function"]
        head = {"index": index, "id": call["id"], "type": "function", "function": {"name": function["name"], "arguments": ""}}
        chunk({"tool_calls": [head]})
        for piece in chunks(function["arguments"], 8):
            chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
    chunk({}, FINISH_REASONS[reply.effective_stop_reason])
    if include_usage:
        frames.append(sse({**envelope, "choices": [], "usage": usage_json(usage, _reasoning_tokens(reply, usage))}))
    frames.append(sse("[DONE]"))
    return frames


def models_list(models: list[str]) -> dict[str, Any]:
    return {
        "object": "list",
        "data": [{"id": name, "object": "model", "created": 1_700_000_000, "owned_by": "fake"} for name in models],
    }
