"""OpenAIProvider (Chat Completions and Responses) with the real ``openai`` SDK against the fake LLM."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest
from clawbot.testing.fake_llm import IN_PROCESS_URL, FakeLLM
from clawbot.types import (
    ImageBlock,
    Message,
    ModelRequest,
    ProviderError,
    Role,
    StopReason,
    SystemPrompt,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolSpec,
    Usage,
)
from clawbot_openai import errors as openai_errors
from clawbot_openai.config import OpenAIConfig
from clawbot_openai.provider import OpenAIProvider

MODEL = "gpt-test"
READ_TOOL = ToolSpec("read", "Read a file.", {"type": "object", "properties": {"path": {"type": "string"}}})
APIS = ["chat", "responses"]


def make_provider(fake: FakeLLM, api: str = "chat", **config: Any) -> OpenAIProvider:
    config.setdefault("api_key", "sk-openai-secret")
    config.setdefault("base_url", IN_PROCESS_URL + "/v1")
    return OpenAIProvider(OpenAIConfig(api=api, **config), http_client=fake.http_client())


def make_request(*messages: Message, **kwargs: Any) -> ModelRequest:
    kwargs.setdefault("system", SystemPrompt("You are a test assistant.", "Now: Monday 09:00."))
    return ModelRequest(model=MODEL, messages=messages or (Message.user("hi"),), **kwargs)


class Deltas:
    def __init__(self) -> None:
        self.items: list[str] = []

    async def __call__(self, text: str) -> None:
        self.items.append(text)


# ------------------------------------------------------------------ replies, both APIs


@pytest.mark.parametrize("api", APIS)
async def test_text_reply_streams_deltas(fake_llm: FakeLLM, api: str) -> None:
    fake_llm.reply("Hello there, how can I help you today?")
    sink = Deltas()
    message = await make_provider(fake_llm, api).complete(make_request(), sink)
    assert message.role is Role.ASSISTANT
    assert message.text == "Hello there, how can I help you today?"
    assert len(sink.items) > 1 and "".join(sink.items) == message.text
    assert message.provider == "openai" and message.model == MODEL
    assert message.stop_reason is StopReason.END_TURN
    request = fake_llm.last_request
    assert request.api == f"openai-{api}" and request.stream is True
    assert request.headers["authorization"] == "Bearer sk-openai-secret"


@pytest.mark.parametrize("api", APIS)
async def test_usage_splits_cached_tokens_out_of_the_input(fake_llm: FakeLLM, api: str) -> None:
    fake_llm.reply("cached", usage={"input_tokens": 12, "output_tokens": 7, "cache_read_tokens": 900})
    message = await make_provider(fake_llm, api).complete(make_request())
    # OpenAI reports prompt tokens = 912 of which 900 cached; clawbot's input is the fresh part
    assert message.usage == Usage(input_tokens=12, output_tokens=7, cache_read_tokens=900, cache_write_tokens=0)


async def test_chat_request_shape(fake_llm: FakeLLM) -> None:
    await make_provider(fake_llm, "chat").complete(make_request(tools=(READ_TOOL,), max_output_tokens=321))
    body = fake_llm.last_request.body
    assert body["messages"] == [
        {"role": "system", "content": "You are a test assistant.\n\nNow: Monday 09:00."},
        {"role": "user", "content": "hi"},
    ]
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert body["tools"] == [{"type": "function", "function": {"name": "read", "description": "Read a file.", "parameters": dict(READ_TOOL.parameters)}}]
    assert body["max_completion_tokens"] == 321
    assert "reasoning_effort" not in body


async def test_responses_request_shape(fake_llm: FakeLLM) -> None:
    await make_provider(fake_llm, "responses").complete(make_request(tools=(READ_TOOL,), max_output_tokens=321))
    body = fake_llm.last_request.body
    assert body["instructions"] == "You are a test assistant.\n\nNow: Monday 09:00."
    assert body["input"] == [{"role": "user", "content": [{"type": "input_text", "text": "hi"}]}]
    assert body["store"] is False and body["stream"] is True
    assert body["tools"][0]["type"] == "function" and body["tools"][0]["name"] == "read"
    assert body["tools"][0]["parameters"] == dict(READ_TOOL.parameters)
    assert body["max_output_tokens"] == 321
    assert "reasoning" not in body


async def test_chat_tool_call_round_trip(fake_llm: FakeLLM) -> None:
    fake_llm.reply(
        "Reading.",
        tool_calls=[
            {"name": "read", "arguments": {"path": "a.txt"}, "id": "call_a"},
            {"name": "read", "arguments": {"path": "b.txt"}, "id": "call_b"},
        ],
    )
    fake_llm.reply("Both say hello.")
    provider = make_provider(fake_llm, "chat")
    user = Message.user("read a and b")
    first = await provider.complete(make_request(user, tools=(READ_TOOL,)))
    assert first.stop_reason is StopReason.TOOL_USE
    assert first.tool_calls == (
        ToolCallBlock("call_a", "read", {"path": "a.txt"}),
        ToolCallBlock("call_b", "read", {"path": "b.txt"}),
    )
    results = (
        Message(Role.TOOL_RESULT, (TextBlock("hello a"),), tool_call_id="call_a", tool_name="read"),
        Message(Role.TOOL_RESULT, (TextBlock("hello b"),), tool_call_id="call_b", tool_name="read"),
    )
    final = await provider.complete(make_request(user, first, *results, tools=(READ_TOOL,)))
    assert final.text == "Both say hello." and final.stop_reason is StopReason.END_TURN

    messages = fake_llm.last_request.body["messages"]
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "tool", "tool"]
    assistant = messages[2]
    assert assistant["content"] == "Reading."
    assert [(c["id"], c["function"]["name"], json.loads(c["function"]["arguments"])) for c in assistant["tool_calls"]] == [
        ("call_a", "read", {"path": "a.txt"}),
        ("call_b", "read", {"path": "b.txt"}),
    ]
    assert fake_llm.last_request.tool_results == [
        {"id": "call_a", "content": "hello a"},
        {"id": "call_b", "content": "hello b"},
    ]


async def test_responses_tool_call_round_trip(fake_llm: FakeLLM) -> None:
    fake_llm.tool_call("read", {"path": "a.txt"})
    fake_llm.reply("It says hello.")
    provider = make_provider(fake_llm, "responses")
    user = Message.user("read a")
    first = await provider.complete(make_request(user, tools=(READ_TOOL,)))
    (call,) = first.tool_calls
    assert call.name == "read" and call.arguments == {"path": "a.txt"} and call.id
    assert first.stop_reason is StopReason.TOOL_USE

    result = Message(Role.TOOL_RESULT, (TextBlock("hello"),), tool_call_id=call.id, tool_name="read", is_error=False)
    final = await provider.complete(make_request(user, first, result, tools=(READ_TOOL,)))
    assert final.text == "It says hello."
    items = fake_llm.last_request.body["input"]
    assert items[1] == {"type": "function_call", "call_id": call.id, "name": "read", "arguments": '{"path": "a.txt"}'}
    assert items[2] == {"type": "function_call_output", "call_id": call.id, "output": "hello"}
    assert fake_llm.last_request.tool_results == [{"id": call.id, "content": "hello"}]


@pytest.mark.parametrize("api", APIS)
async def test_malformed_tool_arguments_are_kept_raw(fake_llm: FakeLLM, api: str) -> None:
    fake_llm.tool_call("read", '{"path": "a.txt"')
    provider = make_provider(fake_llm, api)
    message = await provider.complete(make_request(tools=(READ_TOOL,)))
    (call,) = message.tool_calls
    assert call.name == "read" and call.arguments == {} and call.raw_arguments == '{"path": "a.txt"'
    # sent back as the model wrote it, so the model can see and fix its mistake
    result = Message(Role.TOOL_RESULT, (TextBlock("invalid JSON arguments"),), tool_call_id=call.id, is_error=True)
    await provider.complete(make_request(Message.user("hi"), message, result, tools=(READ_TOOL,)))
    body = fake_llm.last_request.body
    if api == "chat":
        sent = body["messages"][2]["tool_calls"][0]["function"]["arguments"]
    else:
        sent = next(i for i in body["input"] if i.get("type") == "function_call")["arguments"]
    assert sent == '{"path": "a.txt"'


@pytest.mark.parametrize(("level", "effort"), [("minimal", "minimal"), ("medium", "medium"), ("xhigh", "xhigh")])
async def test_thinking_level_becomes_reasoning_effort(fake_llm: FakeLLM, level: str, effort: str) -> None:
    await make_provider(fake_llm, "chat").complete(make_request(thinking=level))
    assert fake_llm.last_request.body["reasoning_effort"] == effort
    await make_provider(fake_llm, "responses").complete(make_request(thinking=level))
    assert fake_llm.last_request.body["reasoning"]["effort"] == effort


async def test_responses_reasoning_summary_becomes_a_thinking_block(fake_llm: FakeLLM) -> None:
    fake_llm.reply("4", thinking="two plus two")
    message = await make_provider(fake_llm, "responses").complete(make_request(thinking="high"))
    assert message.content[0] == ThinkingBlock("two plus two")
    assert message.text == "4"


async def test_chat_images_are_data_urls(fake_llm: FakeLLM) -> None:
    message = Message(Role.USER, (TextBlock("what is this?"), ImageBlock("image/png", data="iVBORw0KGgo=")))
    await make_provider(fake_llm, "chat").complete(make_request(message))
    content = fake_llm.last_request.body["messages"][1]["content"]
    assert content == [
        {"type": "text", "text": "what is this?"},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}},
    ]


async def test_max_tokens_stop_reason(fake_llm: FakeLLM) -> None:
    fake_llm.reply("cut", stop_reason="max_tokens")
    message = await make_provider(fake_llm, "chat").complete(make_request())
    assert message.stop_reason is StopReason.MAX_TOKENS


@pytest.mark.parametrize("api", APIS)
async def test_loopback_server_with_base_url(fake_llm_server: FakeLLM, api: str) -> None:
    fake_llm_server.reply("over the wire")
    provider = OpenAIProvider(OpenAIConfig(api_key="sk-test", base_url=fake_llm_server.base_url + "/v1", api=api))
    sink = Deltas()
    message = await provider.complete(make_request(), sink)
    assert message.text == "over the wire" and "".join(sink.items) == "over the wire"
    assert fake_llm_server.last_request.path == ("/v1/chat/completions" if api == "chat" else "/v1/responses")
    await provider.aclose()


# ------------------------------------------------------------------ errors


FAULTS = [
    ("rate_limit", "rate_limit", 429),
    ("server_error", "server", 500),
    ("overloaded", "overloaded", 503),
    ("auth", "auth", 401),
    ("billing", "billing", 429),  # OpenAI: 429 insufficient_quota, not a rate limit
    ("context_length", "context_overflow", 400),
]


@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize(("fault", "kind", "status"), FAULTS)
async def test_faults_become_classified_provider_errors(fake_llm: FakeLLM, api: str, fault: str, kind: str, status: int) -> None:
    fake_llm.fail(fault)
    with pytest.raises(ProviderError) as caught:
        await make_provider(fake_llm, api).complete(make_request())
    error = caught.value
    assert error.kind == kind and error.status == status and error.provider == "openai"
    assert "sk-openai-secret" not in str(error)


@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize(("fault", "kind"), [("rate_limit", "rate_limit"), ("overloaded", "overloaded"), ("server_error", "server")])
async def test_a_retryable_error_carries_the_servers_retry_after(fake_llm: FakeLLM, api: str, fault: str, kind: str) -> None:
    fake_llm.fail(fault, retry_after=4)
    with pytest.raises(ProviderError) as caught:
        await make_provider(fake_llm, api).complete(make_request())
    assert caught.value.kind == kind and caught.value.retry_after == 4.0


async def test_unsupported_reasoning_parameter_is_thinking_unsupported(fake_llm: FakeLLM) -> None:
    fake_llm.fail("server_error", status=400, message="Unsupported parameter: 'reasoning_effort' is not supported with this model.")
    with pytest.raises(ProviderError) as caught:
        await make_provider(fake_llm, "chat").complete(make_request(thinking="high"))
    assert caught.value.kind == "thinking_unsupported"


@pytest.mark.parametrize("api", APIS)
async def test_dropped_stream_is_an_error_not_half_a_message(fake_llm: FakeLLM, api: str) -> None:
    fake_llm.fail("dropped_stream", after_events=4)
    fake_llm.reply("This answer is long enough to be cut off half way through its deltas.")
    provider = make_provider(fake_llm, api)
    with pytest.raises(ProviderError) as caught:
        await provider.complete(make_request())
    assert caught.value.kind in ("connection", "server")
    message = await provider.complete(make_request())
    assert message.text == "This answer is long enough to be cut off half way through its deltas."


async def test_slow_answer_past_the_timeout_is_a_timeout(fake_llm: FakeLLM) -> None:
    fake_llm.fail("slow", delay=1.0)
    with pytest.raises(ProviderError) as caught:
        await make_provider(fake_llm, "chat", timeout_s=0.1).complete(make_request())
    assert caught.value.kind == "timeout"


async def test_missing_api_key_is_an_auth_error_before_any_request(fake_llm: FakeLLM) -> None:
    provider = OpenAIProvider(OpenAIConfig(base_url=IN_PROCESS_URL + "/v1"), env={}, http_client=fake_llm.http_client())
    with pytest.raises(ProviderError) as caught:
        await provider.complete(make_request())
    assert caught.value.kind == "auth" and fake_llm.requests == []


def test_stream_chunks_without_a_finish_reason_are_incomplete() -> None:
    from clawbot_openai.wire_chat import ChatAccumulator

    acc = ChatAccumulator()
    acc.feed({"choices": [{"index": 0, "delta": {"content": "half"}, "finish_reason": None}]})
    assert not acc.complete
    acc.feed({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    assert acc.complete


@pytest.mark.parametrize(
    ("status", "code", "message", "kind"),
    [
        (None, "server_error", "The server had an error while processing your request.", "server"),  # in-stream
        (None, "rate_limit_exceeded", "Rate limit reached", "rate_limit"),
        (None, "context_length_exceeded", "Your input exceeds the context window", "context_overflow"),
        (403, "unsupported_country_region_territory", "Country not supported", "auth"),
        (404, "model_not_found", "The model does not exist", "unknown_model"),
        (502, None, "Bad gateway", "server"),
        (402, None, "Payment required", "billing"),
    ],
)
def test_classification_table(status: int | None, code: str | None, message: str, kind: str) -> None:
    assert openai_errors.classify(status, code, message) == kind


async def test_responses_failed_event_is_a_provider_error() -> None:
    from clawbot_openai.wire_responses import ResponsesAccumulator, StreamFailed

    acc = ResponsesAccumulator()
    with pytest.raises(StreamFailed) as caught:
        acc.feed({"type": "response.failed", "response": {"error": {"code": "server_error", "message": "boom"}}})
    error = openai_errors.from_payload(caught.value.code, caught.value.message, "openai")
    assert error.kind == "server" and "boom" in str(error)


# ------------------------------------------------------------------ detection, model info, laziness


async def test_detects_gpt5_from_env_or_config() -> None:
    assert await OpenAIProvider(OpenAIConfig(), env={"OPENAI_API_KEY": "k"}).detect_default_model() == "gpt-5"
    assert await OpenAIProvider(OpenAIConfig(api_key="k"), env={}).detect_default_model() == "gpt-5"
    assert await OpenAIProvider(OpenAIConfig(), env={}).detect_default_model() is None
    assert OpenAIProvider.detect_priority == 20


def test_model_info_context_windows() -> None:
    provider = OpenAIProvider()
    assert provider.model_info("gpt-5-mini").context_window == 400_000
    assert provider.model_info("gpt-5").reasoning is True
    assert provider.model_info("gpt-4o-mini").context_window == 128_000
    assert provider.model_info("some-local-model").context_window == 128_000


def test_the_sdk_is_not_imported_until_the_first_call() -> None:
    code = (
        "import sys\n"
        "import clawbot_openai.plugin, clawbot_openai.provider\n"
        "from clawbot_openai.config import OpenAIConfig\n"
        "clawbot_openai.provider.OpenAIProvider(OpenAIConfig(), env={})\n"
        "print('openai' in sys.modules, 'httpx2' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False", "False"]


@pytest.mark.parametrize("api", APIS)
async def test_a_per_request_api_key_overrides_the_configured_one(fake_llm: FakeLLM, api: str) -> None:
    provider = make_provider(fake_llm, api)
    await provider.complete(make_request(api_key="sk-profile-2"))
    assert fake_llm.last_request.headers["authorization"] == "Bearer sk-profile-2"
    await provider.complete(make_request())
    assert fake_llm.last_request.headers["authorization"] == "Bearer sk-openai-secret"


def test_out_of_order_messages_are_a_role_ordering_error() -> None:
    from clawbot_openai.errors import classify

    text = "Invalid parameter: messages with role 'tool' must be a response to a preceding message with 'tool_calls'."
    assert classify(400, "invalid_request_error", text) == "role_ordering"
    assert classify(400, None, "Unsupported value: 'temperature'") == "invalid_request"
