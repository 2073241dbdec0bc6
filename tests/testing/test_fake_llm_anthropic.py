"""The fake LLM speaks the Anthropic Messages API to the real ``anthropic`` SDK."""

from __future__ import annotations

import anthropic
from clawbot.testing.fake_llm import FakeLLM, RecordedRequest, Reply, ToolCallSpec, Usage

READ_TOOL = {
    "name": "read",
    "description": "Read a file",
    "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
}
USER = [{"role": "user", "content": "What is in notes.txt?"}]


async def test_streaming_tool_call_round_trip(fake: FakeLLM, anthropic_client: anthropic.AsyncAnthropic) -> None:
    fake.reply(
        "Let me read it.",
        tool_calls=[ToolCallSpec("read", {"path": "notes.txt", "limit": 20}, id="toolu_fixed")],
        usage=Usage(input_tokens=50, output_tokens=20, cache_read_tokens=40, cache_write_tokens=10),
    )
    fake.reply("The file says hi.")

    partial_json: list[str] = []
    async with anthropic_client.messages.stream(model="claude-test", max_tokens=256, messages=USER, tools=[READ_TOOL]) as stream:
        async for event in stream:
            if event.type == "content_block_delta" and event.delta.type == "input_json_delta":
                partial_json.append(event.delta.partial_json)
        first = await stream.get_final_message()

    assert first.stop_reason == "tool_use"
    assert [b.type for b in first.content] == ["text", "tool_use"]
    assert first.content[0].text == "Let me read it."
    tool_use = first.content[1]
    assert (tool_use.id, tool_use.name, tool_use.input) == ("toolu_fixed", "read", {"path": "notes.txt", "limit": 20})
    assert len(partial_json) > 1, "arguments should arrive in several input_json_delta fragments"
    usage = first.usage
    assert (usage.input_tokens, usage.output_tokens) == (50, 20)
    assert (usage.cache_read_input_tokens, usage.cache_creation_input_tokens) == (40, 10)

    messages = [
        *USER,
        {"role": "assistant", "content": first.to_param()["content"]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_fixed", "content": "hi"}]},
    ]
    async with anthropic_client.messages.stream(model="claude-test", max_tokens=256, messages=messages, tools=[READ_TOOL]) as stream:
        second = await stream.get_final_message()
    assert second.stop_reason == "end_turn"
    assert second.content[0].text == "The file says hi."

    assert len(fake.requests) == 2
    req1, req2 = fake.requests
    assert (req1.api, req1.method, req1.path, req1.model, req1.stream) == (
        "anthropic",
        "POST",
        "/v1/messages",
        "claude-test",
        True,
    )
    assert req1.tools == ["read"]
    # anthropic 2.x sends the API key as a bearer token, 1.x as x-api-key.
    assert req1.headers.get("x-api-key") == "test" or req1.headers.get("authorization") == "Bearer test"
    assert "anthropic-version" in req1.headers
    assert req2.tool_results == [{"id": "toolu_fixed", "content": "hi", "is_error": False}]
    assert req2.messages[1]["content"][1]["type"] == "tool_use"
    assert req2.messages[2]["content"][0] == {"type": "tool_result", "tool_use_id": "toolu_fixed", "content": "hi"}


async def test_non_streaming_text(fake: FakeLLM, anthropic_client: anthropic.AsyncAnthropic) -> None:
    fake.reply("Hello there!")
    message = await anthropic_client.messages.create(model="claude-test", max_tokens=64, system="Be brief.", messages=USER)
    assert isinstance(message, anthropic.types.Message)
    assert message.content[0].type == "text" and message.content[0].text == "Hello there!"
    assert message.stop_reason == "end_turn"
    assert message.model == "claude-test"
    assert message.id.startswith("msg_")
    # Usage omitted from the script: estimated from the request and reply sizes.
    assert message.usage.input_tokens > 0 and message.usage.output_tokens > 0
    assert message.usage.cache_read_input_tokens == 0
    req = fake.last_request
    assert req.stream is False and req.system == "Be brief." and req.messages == USER


async def test_thinking_block_streamed_and_plain(fake: FakeLLM, anthropic_client: anthropic.AsyncAnthropic) -> None:
    fake.reply("42.", thinking="The user wants the answer to everything.")
    fake.reply("43.", thinking="Off by one.")
    kinds: list[str] = []
    async with anthropic_client.messages.stream(
        model="claude-test",
        max_tokens=2048,
        thinking={"type": "enabled", "budget_tokens": 1024},
        messages=USER,
    ) as stream:
        async for event in stream:
            if event.type == "content_block_delta":
                kinds.append(event.delta.type)
        streamed = await stream.get_final_message()
    assert [b.type for b in streamed.content] == ["thinking", "text"]
    assert streamed.content[0].thinking == "The user wants the answer to everything."
    assert streamed.content[0].signature
    assert streamed.content[1].text == "42."
    assert "thinking_delta" in kinds and kinds.count("signature_delta") == 1

    plain = await anthropic_client.messages.create(model="claude-test", max_tokens=2048, messages=USER)
    assert plain.content[0].type == "thinking" and plain.content[0].thinking == "Off by one."
    assert plain.content[0].signature
    assert plain.content[1].text == "43."


async def test_stop_reason_override_and_default_reply(fake: FakeLLM, anthropic_client: anthropic.AsyncAnthropic) -> None:
    fake.reply("This answer was cut", stop_reason="max_tokens")
    cut = await anthropic_client.messages.create(model="claude-test", max_tokens=5, messages=USER)
    assert cut.stop_reason == "max_tokens"
    # The script is empty now: a non-strict fake answers the default text.
    fallback = await anthropic_client.messages.create(model="claude-test", max_tokens=5, messages=USER)
    assert fallback.content[0].text == "ok"


async def test_callable_reply_sees_the_request(fake: FakeLLM, anthropic_client: anthropic.AsyncAnthropic) -> None:
    def echo(request: RecordedRequest) -> Reply:
        return Reply(text=f"you said: {request.messages[-1]['content']}")

    fake.queue(echo, "plain string reply")
    first = await anthropic_client.messages.create(model="claude-test", max_tokens=64, messages=USER)
    second = await anthropic_client.messages.create(model="claude-test", max_tokens=64, messages=USER)
    assert first.content[0].text == "you said: What is in notes.txt?"
    assert second.content[0].text == "plain string reply"


async def test_count_tokens_and_models(anthropic_client: anthropic.AsyncAnthropic) -> None:
    fake = FakeLLM(models=["claude-a", "claude-b"])
    client = anthropic.AsyncAnthropic(api_key="test", base_url="http://x.test", http_client=fake.http_client())
    short = await client.messages.count_tokens(model="claude-a", messages=USER)
    long = await client.messages.count_tokens(model="claude-a", messages=[{"role": "user", "content": "word " * 400}])
    assert 0 < short.input_tokens < long.input_tokens
    page = await client.models.list()
    assert [m.id for m in page.data] == ["claude-a", "claude-b"]
    assert [r.path for r in fake.requests] == ["/v1/messages/count_tokens"] * 2 + ["/v1/models"]
