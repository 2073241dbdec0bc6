"""The fake LLM speaks OpenAI Chat Completions to the real ``openai`` SDK."""

from __future__ import annotations

import json

import openai
from clawbot.testing.fake_llm import FakeLLM, ToolCallSpec, Usage

READ_TOOL = {
    "type": "function",
    "function": {
        "name": "read",
        "description": "Read a file",
        "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
    },
}
USER = [{"role": "user", "content": "What is in notes.txt?"}]


async def test_streaming_tool_call_round_trip(fake: FakeLLM, openai_client: openai.AsyncOpenAI) -> None:
    fake.reply(
        tool_calls=[ToolCallSpec("read", {"path": "notes.txt"}, id="call_fixed")],
        usage=Usage(input_tokens=30, output_tokens=12, cache_read_tokens=64, cache_write_tokens=6),
    )
    fake.reply("The file says hi.", usage={"prompt_tokens": 5, "completion_tokens": 4})

    arg_deltas = 0
    async with openai_client.chat.completions.stream(model="gpt-test", messages=USER, tools=[READ_TOOL], stream_options={"include_usage": True}) as stream:
        async for event in stream:
            if event.type == "tool_calls.function.arguments.delta":
                arg_deltas += 1
        first = await stream.get_final_completion()

    choice = first.choices[0]
    assert choice.finish_reason == "tool_calls"
    assert arg_deltas > 1
    [call] = choice.message.tool_calls
    assert (call.id, call.function.name) == ("call_fixed", "read")
    assert json.loads(call.function.arguments) == {"path": "notes.txt"}
    assert first.usage is not None
    assert first.usage.prompt_tokens == 30 + 64 + 6
    assert first.usage.completion_tokens == 12
    assert first.usage.total_tokens == 100 + 12
    assert first.usage.prompt_tokens_details.cached_tokens == 64

    messages = [
        *USER,
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": call.id, "type": "function", "function": {"name": "read", "arguments": call.function.arguments}}],
        },
        {"role": "tool", "tool_call_id": call.id, "content": "hi"},
    ]
    async with openai_client.chat.completions.stream(model="gpt-test", messages=messages, tools=[READ_TOOL]) as stream:
        second = await stream.get_final_completion()
    assert second.choices[0].message.content == "The file says hi."
    assert second.choices[0].finish_reason == "stop"

    req1, req2 = fake.requests
    assert (req1.api, req1.path, req1.stream, req1.tools) == ("openai-chat", "/v1/chat/completions", True, ["read"])
    assert req1.headers["authorization"] == "Bearer test"
    assert req2.tool_results == [{"id": "call_fixed", "content": "hi"}]
    assert req2.messages[-1] == {"role": "tool", "tool_call_id": "call_fixed", "content": "hi"}


async def test_raw_chunks_follow_the_wire_format(fake: FakeLLM, openai_client: openai.AsyncOpenAI) -> None:
    fake.reply(
        "Two reads.",
        tool_calls=[ToolCallSpec("read", {"path": "a"}), ToolCallSpec("read", '{"path": "b"')],  # second malformed
        usage={"input_tokens": 10, "output_tokens": 8, "cache_read_tokens": 2},
    )
    stream = await openai_client.chat.completions.create(model="gpt-test", messages=USER, stream=True, stream_options={"include_usage": True})
    chunks = [chunk async for chunk in stream]

    assert chunks[0].choices[0].delta.role == "assistant"
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == "Two reads."
    calls: dict[int, dict[str, str]] = {}
    for chunk in chunks:
        for delta in (chunk.choices[0].delta.tool_calls or []) if chunk.choices else []:
            slot = calls.setdefault(delta.index, {"id": "", "name": "", "arguments": ""})
            slot["id"] += delta.id or ""
            slot["name"] += (delta.function.name or "") if delta.function else ""
            slot["arguments"] += (delta.function.arguments or "") if delta.function else ""
    assert sorted(calls) == [0, 1]
    assert calls[0]["id"].startswith("call_") and calls[0]["name"] == "read"
    assert json.loads(calls[0]["arguments"]) == {"path": "a"}
    assert calls[1]["arguments"] == '{"path": "b"'  # the malformed JSON arrives verbatim
    finish = [c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason]
    assert finish == ["tool_calls"]
    usage_chunk = chunks[-1]
    assert usage_chunk.choices == [] and usage_chunk.usage is not None
    assert usage_chunk.usage.prompt_tokens == 12 and usage_chunk.usage.prompt_tokens_details.cached_tokens == 2
    assert all(c.usage is None for c in chunks[:-1])


async def test_no_usage_chunk_unless_asked(fake: FakeLLM, openai_client: openai.AsyncOpenAI) -> None:
    fake.reply("hello")
    stream = await openai_client.chat.completions.create(model="gpt-test", messages=USER, stream=True)
    chunks = [chunk async for chunk in stream]
    assert all(c.usage is None and c.choices for c in chunks)
    assert chunks[-1].choices[0].finish_reason == "stop"


async def test_non_streaming_text_and_length(fake: FakeLLM, openai_client: openai.AsyncOpenAI) -> None:
    fake.reply("Hello there!")
    fake.reply("Cut sh", stop_reason="max_tokens")
    completion = await openai_client.chat.completions.create(model="gpt-test", messages=USER)
    assert completion.object == "chat.completion"
    assert completion.choices[0].message.content == "Hello there!"
    assert completion.choices[0].message.tool_calls is None
    assert completion.choices[0].finish_reason == "stop"
    assert completion.model == "gpt-test"
    assert completion.usage.prompt_tokens > 0 and completion.usage.completion_tokens > 0
    cut = await openai_client.chat.completions.create(model="gpt-test", messages=USER, max_completion_tokens=3)
    assert cut.choices[0].finish_reason == "length"
    assert fake.requests[0].stream is False


async def test_non_streaming_tool_calls(fake: FakeLLM, openai_client: openai.AsyncOpenAI) -> None:
    fake.tool_call("read", {"path": "x"})
    completion = await openai_client.chat.completions.create(model="gpt-test", messages=USER, tools=[READ_TOOL])
    message = completion.choices[0].message
    assert completion.choices[0].finish_reason == "tool_calls"
    assert message.content is None
    assert message.tool_calls[0].function.name == "read"
    assert json.loads(message.tool_calls[0].function.arguments) == {"path": "x"}


async def test_models_list(openai_client: openai.AsyncOpenAI, fake: FakeLLM) -> None:
    fake.reply("a", model="gpt-primary")
    fake.reply("b", model="gpt-backup")
    page = await openai_client.models.list()
    assert [m.id for m in page.data] == ["gpt-primary", "gpt-backup"]
