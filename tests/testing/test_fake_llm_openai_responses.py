"""The fake LLM speaks the OpenAI Responses API to the real ``openai`` SDK."""

from __future__ import annotations

import json

import openai
from clawbot.testing.fake_llm import FakeLLM, ToolCallSpec, Usage

READ_TOOL = {
    "type": "function",
    "name": "read",
    "description": "Read a file",
    "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
    "strict": False,
}


async def test_streaming_tool_call_round_trip(fake: FakeLLM, openai_client: openai.AsyncOpenAI) -> None:
    fake.reply(
        tool_calls=[ToolCallSpec("read", {"path": "notes.txt"}, id="call_fixed")],
        usage=Usage(input_tokens=20, output_tokens=9, cache_read_tokens=80),
    )
    fake.reply("The file says hi.")

    event_types: list[str] = []
    async with openai_client.responses.stream(model="gpt-test", instructions="Be brief.", input="What is in notes.txt?", tools=[READ_TOOL]) as stream:
        async for event in stream:
            event_types.append(event.type)
        first = await stream.get_final_response()

    assert event_types[:2] == ["response.created", "response.in_progress"]
    assert event_types[-1] == "response.completed"
    assert event_types.count("response.function_call_arguments.delta") > 1
    assert "response.function_call_arguments.done" in event_types
    assert "response.output_item.done" in event_types
    [call] = [item for item in first.output if item.type == "function_call"]
    assert (call.call_id, call.name, call.status) == ("call_fixed", "read", "completed")
    assert json.loads(call.arguments) == {"path": "notes.txt"}
    assert first.status == "completed"
    assert first.usage.input_tokens == 100
    assert first.usage.input_tokens_details.cached_tokens == 80
    assert first.usage.output_tokens == 9 and first.usage.total_tokens == 109

    follow_up = [
        {"role": "user", "content": "What is in notes.txt?"},
        {"type": "function_call", "call_id": call.call_id, "name": call.name, "arguments": call.arguments},
        {"type": "function_call_output", "call_id": call.call_id, "output": "hi"},
    ]
    async with openai_client.responses.stream(model="gpt-test", input=follow_up, tools=[READ_TOOL]) as stream:
        second = await stream.get_final_response()
    assert second.output_text == "The file says hi."

    req1, req2 = fake.requests
    assert (req1.api, req1.path, req1.stream, req1.tools) == ("openai-responses", "/v1/responses", True, ["read"])
    assert req1.system == "Be brief."
    assert req1.messages == [{"role": "user", "content": "What is in notes.txt?"}]
    assert req2.tool_results == [{"id": "call_fixed", "content": "hi"}]
    assert req2.messages[-1] == {"type": "function_call_output", "call_id": "call_fixed", "output": "hi"}


async def test_streamed_text_deltas_accumulate(fake: FakeLLM, openai_client: openai.AsyncOpenAI) -> None:
    fake.reply("A somewhat longer answer, in pieces.")
    deltas: list[str] = []
    async with openai_client.responses.stream(model="gpt-test", input="hi") as stream:
        async for event in stream:
            if event.type == "response.output_text.delta":
                deltas.append(event.delta)
        final = await stream.get_final_response()
    assert len(deltas) > 1 and "".join(deltas) == "A somewhat longer answer, in pieces."
    assert final.output_text == "A somewhat longer answer, in pieces."


async def test_non_streaming_text(fake: FakeLLM, openai_client: openai.AsyncOpenAI) -> None:
    fake.reply("Hello there!", usage={"input_tokens": 7, "output_tokens": 3, "cached_tokens": 5})
    response = await openai_client.responses.create(model="gpt-test", input="hi")
    assert response.object == "response" and response.status == "completed"
    assert response.output_text == "Hello there!"
    assert response.id.startswith("resp_")
    assert response.usage.input_tokens == 12 and response.usage.input_tokens_details.cached_tokens == 5
    assert fake.last_request.stream is False


async def test_reasoning_summary_and_incomplete(fake: FakeLLM, openai_client: openai.AsyncOpenAI) -> None:
    fake.reply("Answer.", thinking="Think first.")
    fake.reply("Cut", stop_reason="max_tokens")
    summaries: list[str] = []
    async with openai_client.responses.stream(model="gpt-test", input="hi") as stream:
        async for event in stream:
            if event.type == "response.reasoning_summary_text.delta":
                summaries.append(event.delta)
        final = await stream.get_final_response()
    assert "".join(summaries) == "Think first."
    assert [item.type for item in final.output] == ["reasoning", "message"]
    assert final.output[0].summary[0].text == "Think first."
    assert final.usage.output_tokens_details.reasoning_tokens > 0

    cut = await openai_client.responses.create(model="gpt-test", input="hi", max_output_tokens=16)
    assert cut.status == "incomplete"
    assert cut.incomplete_details.reason == "max_output_tokens"
