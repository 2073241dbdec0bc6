"""AnthropicProvider with the real ``anthropic`` SDK against the fake LLM server."""

from __future__ import annotations

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
from clawbot_anthropic import errors as anthropic_errors
from clawbot_anthropic.config import AnthropicConfig
from clawbot_anthropic.provider import AnthropicProvider

MODEL = "claude-opus-4-5"
READ_TOOL = ToolSpec("read", "Read a file.", {"type": "object", "properties": {"path": {"type": "string"}}})


def make_provider(fake: FakeLLM, **config: Any) -> AnthropicProvider:
    config.setdefault("api_key", "sk-ant-secret")
    config.setdefault("base_url", IN_PROCESS_URL)
    return AnthropicProvider(AnthropicConfig(**config), http_client=fake.http_client())


def make_request(*messages: Message, **kwargs: Any) -> ModelRequest:
    kwargs.setdefault("system", SystemPrompt("You are a test assistant.", "Now: Monday 09:00."))
    return ModelRequest(model=MODEL, messages=messages or (Message.user("hi"),), **kwargs)


class Deltas:
    def __init__(self) -> None:
        self.items: list[str] = []

    async def __call__(self, text: str) -> None:
        self.items.append(text)


# ------------------------------------------------------------------ replies


async def test_text_reply_streams_deltas_and_returns_a_complete_message(fake_llm: FakeLLM) -> None:
    fake_llm.reply("Hello there, how can I help you today?")
    sink = Deltas()
    message = await make_provider(fake_llm).complete(make_request(), sink)

    assert message.role is Role.ASSISTANT
    assert message.text == "Hello there, how can I help you today?"
    assert len(sink.items) > 1 and "".join(sink.items) == message.text
    assert message.provider == "anthropic" and message.model == MODEL
    assert message.stop_reason is StopReason.END_TURN
    request = fake_llm.last_request
    assert request.api == "anthropic" and request.stream is True
    assert request.body["messages"] == [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]
    # anthropic 2.x sends the key as a bearer token (1.x used x-api-key)
    sent = request.headers.get("x-api-key") or request.headers.get("authorization", "").removeprefix("Bearer ")
    assert sent == "sk-ant-secret"


async def test_usage_carries_cache_read_and_write_tokens(fake_llm: FakeLLM) -> None:
    fake_llm.reply("cached", usage={"input_tokens": 12, "output_tokens": 7, "cache_read_tokens": 900, "cache_write_tokens": 40})
    message = await make_provider(fake_llm).complete(make_request())
    assert message.usage == Usage(input_tokens=12, output_tokens=7, cache_read_tokens=900, cache_write_tokens=40)


async def test_system_prompt_has_cache_control_on_the_stable_block_only(fake_llm: FakeLLM) -> None:
    await make_provider(fake_llm).complete(make_request(tools=(READ_TOOL,)))
    body = fake_llm.last_request.body
    assert body["system"] == [
        {"type": "text", "text": "You are a test assistant.", "cache_control": {"type": "ephemeral"}},
        {"type": "text", "text": "Now: Monday 09:00."},
    ]
    # the only breakpoint of the whole request is the end of the stable system text
    assert str(body).count("cache_control") == 1
    assert body["tools"] == [{"name": "read", "description": "Read a file.", "input_schema": dict(READ_TOOL.parameters)}]


async def test_system_prompt_without_volatile_part_is_one_cached_block(fake_llm: FakeLLM) -> None:
    await make_provider(fake_llm).complete(make_request(system=SystemPrompt("only stable")))
    assert fake_llm.last_request.body["system"] == [{"type": "text", "text": "only stable", "cache_control": {"type": "ephemeral"}}]


async def test_tool_call_round_trip(fake_llm: FakeLLM) -> None:
    fake_llm.reply(
        "Let me read both.",
        tool_calls=[
            {"name": "read", "arguments": {"path": "a.txt"}, "id": "toolu_a"},
            {"name": "read", "arguments": {"path": "b.txt"}, "id": "toolu_b"},
        ],
    )
    fake_llm.reply("Both files say hello.")
    provider = make_provider(fake_llm)
    user = Message.user("what is in a.txt and b.txt?")

    first = await provider.complete(make_request(user, tools=(READ_TOOL,)))
    assert first.stop_reason is StopReason.TOOL_USE
    assert first.text == "Let me read both."
    assert first.tool_calls == (
        ToolCallBlock("toolu_a", "read", {"path": "a.txt"}),
        ToolCallBlock("toolu_b", "read", {"path": "b.txt"}),
    )

    results = (
        Message(Role.TOOL_RESULT, (TextBlock("hello from a"),), tool_call_id="toolu_a", tool_name="read"),
        Message(Role.TOOL_RESULT, (TextBlock("no such file"),), tool_call_id="toolu_b", tool_name="read", is_error=True),
    )
    final = await provider.complete(make_request(user, first, *results, tools=(READ_TOOL,)))
    assert final.text == "Both files say hello."
    assert final.stop_reason is StopReason.END_TURN

    second = fake_llm.last_request
    messages = second.body["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    assert messages[1]["content"] == [
        {"type": "text", "text": "Let me read both."},
        {"type": "tool_use", "id": "toolu_a", "name": "read", "input": {"path": "a.txt"}},
        {"type": "tool_use", "id": "toolu_b", "name": "read", "input": {"path": "b.txt"}},
    ]
    # both results merged into one user message, in order, the error flagged
    assert messages[2]["content"] == [
        {"type": "tool_result", "tool_use_id": "toolu_a", "content": [{"type": "text", "text": "hello from a"}]},
        {
            "type": "tool_result",
            "tool_use_id": "toolu_b",
            "content": [{"type": "text", "text": "no such file"}],
            "is_error": True,
        },
    ]
    assert [r["id"] for r in second.tool_results] == ["toolu_a", "toolu_b"]


async def test_user_message_after_tool_results_joins_the_same_user_turn(fake_llm: FakeLLM) -> None:
    call = Message(Role.ASSISTANT, (ToolCallBlock("toolu_1", "read", {"path": "x"}),))
    result = Message(Role.TOOL_RESULT, (TextBlock("x"),), tool_call_id="toolu_1")
    await make_provider(fake_llm).complete(make_request(Message.user("go"), call, result, Message.user("and now?")))
    messages = fake_llm.last_request.body["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    assert [b["type"] for b in messages[2]["content"]] == ["tool_result", "text"]


async def test_malformed_tool_arguments_are_kept_raw(fake_llm: FakeLLM) -> None:
    fake_llm.tool_call("read", '{"path": "a.txt"')
    message = await make_provider(fake_llm).complete(make_request(tools=(READ_TOOL,)))
    (call,) = message.tool_calls
    assert call.name == "read"
    assert call.arguments == {}
    assert call.raw_arguments == '{"path": "a.txt"'
    assert message.stop_reason is StopReason.TOOL_USE


@pytest.mark.parametrize(("level", "budget"), [("minimal", 1024), ("low", 4096), ("high", 16_000), ("xhigh", 32_000)])
async def test_thinking_level_becomes_a_budget(fake_llm: FakeLLM, level: str, budget: int) -> None:
    await make_provider(fake_llm).complete(make_request(thinking=level))
    body = fake_llm.last_request.body
    assert body["thinking"] == {"type": "enabled", "budget_tokens": budget}
    assert body["max_tokens"] > budget


async def test_thinking_off_sends_no_thinking_and_max_tokens_from_the_model(fake_llm: FakeLLM) -> None:
    await make_provider(fake_llm).complete(make_request(thinking="off"))
    body = fake_llm.last_request.body
    assert "thinking" not in body
    assert body["max_tokens"] == AnthropicProvider().model_info(MODEL).max_output_tokens
    await make_provider(fake_llm).complete(make_request(max_output_tokens=1234))
    assert fake_llm.last_request.body["max_tokens"] == 1234


async def test_thinking_block_is_parsed_and_replayed_with_its_signature(fake_llm: FakeLLM) -> None:
    fake_llm.reply("The answer is 4.", thinking="2 + 2 is 4", tool_calls=[{"name": "read", "arguments": {}, "id": "t1"}])
    provider = make_provider(fake_llm)
    sink = Deltas()
    first = await provider.complete(make_request(thinking="medium", tools=(READ_TOOL,)), sink)
    thinking = first.content[0]
    assert isinstance(thinking, ThinkingBlock)
    assert thinking.text == "2 + 2 is 4" and thinking.signature
    assert "2 + 2" not in "".join(sink.items)  # thinking is not streamed as answer text

    result = Message(Role.TOOL_RESULT, (TextBlock("{}"),), tool_call_id="t1")
    await provider.complete(make_request(Message.user("hi"), first, result, thinking="medium", tools=(READ_TOOL,)))
    assistant = fake_llm.last_request.body["messages"][1]
    assert assistant["content"][0] == {"type": "thinking", "thinking": "2 + 2 is 4", "signature": thinking.signature}


async def test_images_are_sent_as_base64_and_url_sources(fake_llm: FakeLLM) -> None:
    message = Message(
        Role.USER,
        (TextBlock("what is this?"), ImageBlock("image/png", data="iVBORw0KGgo="), ImageBlock("image/jpeg", url="https://x.test/a.jpg")),
    )
    await make_provider(fake_llm).complete(make_request(message))
    content = fake_llm.last_request.body["messages"][0]["content"]
    assert content[1] == {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}}
    assert content[2] == {"type": "image", "source": {"type": "url", "url": "https://x.test/a.jpg"}}


async def test_loopback_server_with_base_url(fake_llm_server: FakeLLM) -> None:
    fake_llm_server.reply("over the wire")
    provider = AnthropicProvider(AnthropicConfig(api_key="sk-ant-test", base_url=fake_llm_server.base_url))
    sink = Deltas()
    message = await provider.complete(make_request(), sink)
    assert message.text == "over the wire" and "".join(sink.items) == "over the wire"
    assert fake_llm_server.last_request.path == "/v1/messages"
    await provider.aclose()


# ------------------------------------------------------------------ errors


@pytest.mark.parametrize(
    ("fault", "kind", "status"),
    [
        ("rate_limit", "rate_limit", 429),
        ("server_error", "server", 500),
        ("overloaded", "overloaded", 529),
        ("auth", "auth", 401),
        ("billing", "billing", 402),
        ("context_length", "context_overflow", 400),
    ],
)
async def test_faults_become_classified_provider_errors(fake_llm: FakeLLM, fault: str, kind: str, status: int) -> None:
    fake_llm.fail(fault)
    with pytest.raises(ProviderError) as caught:
        await make_provider(fake_llm).complete(make_request())
    error = caught.value
    assert error.kind == kind and error.status == status and error.provider == "anthropic"
    assert "sk-ant-secret" not in str(error)


@pytest.mark.parametrize(("fault", "kind"), [("rate_limit", "rate_limit"), ("overloaded", "overloaded"), ("server_error", "server")])
async def test_a_retryable_error_carries_the_servers_retry_after(fake_llm: FakeLLM, fault: str, kind: str) -> None:
    fake_llm.fail(fault, retry_after=2.5)
    with pytest.raises(ProviderError) as caught:
        await make_provider(fake_llm).complete(make_request())
    assert caught.value.kind == kind and caught.value.retry_after == 2.5


async def test_bad_request_about_thinking_is_thinking_unsupported(fake_llm: FakeLLM) -> None:
    fake_llm.fail("context_length", message="thinking is not supported for this model")
    with pytest.raises(ProviderError) as caught:
        await make_provider(fake_llm).complete(make_request(thinking="high"))
    assert caught.value.kind == "thinking_unsupported"


async def test_dropped_stream_is_an_error_not_half_a_message(fake_llm: FakeLLM) -> None:
    fake_llm.fail("dropped_stream", after_events=4)
    fake_llm.reply("This answer is long enough to be cut off half way through its deltas.")
    provider = make_provider(fake_llm)
    sink = Deltas()
    with pytest.raises(ProviderError) as caught:
        await provider.complete(make_request(), sink)
    assert caught.value.kind in ("connection", "server")
    # the retry (the kernel's job) gets the whole reply
    message = await provider.complete(make_request())
    assert message.text == "This answer is long enough to be cut off half way through its deltas."


async def test_slow_answer_past_the_timeout_is_a_timeout(fake_llm: FakeLLM) -> None:
    fake_llm.fail("slow", delay=1.0)
    with pytest.raises(ProviderError) as caught:
        await make_provider(fake_llm, timeout_s=0.1).complete(make_request())
    assert caught.value.kind == "timeout"


async def test_unreachable_server_is_a_connection_error() -> None:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    provider = AnthropicProvider(AnthropicConfig(api_key="k", base_url=f"http://127.0.0.1:{port}", timeout_s=5))
    with pytest.raises(ProviderError) as caught:
        await provider.complete(make_request())
    assert caught.value.kind == "connection"


async def test_missing_api_key_is_an_auth_error_before_any_request(fake_llm: FakeLLM) -> None:
    provider = AnthropicProvider(AnthropicConfig(base_url=IN_PROCESS_URL), env={}, http_client=fake_llm.http_client())
    with pytest.raises(ProviderError) as caught:
        await provider.complete(make_request())
    assert caught.value.kind == "auth"
    assert fake_llm.requests == []


@pytest.mark.parametrize(
    ("status", "error_type", "message", "kind"),
    [
        (200, "overloaded_error", "Overloaded", "overloaded"),  # an SSE error event mid-stream
        (200, "api_error", "Internal server error", "server"),
        (403, "permission_error", "not allowed", "auth"),
        (400, "invalid_request_error", "Your credit balance is too low", "billing"),
        (400, "invalid_request_error", "messages.1: tool_use ids must be unique", "invalid_request"),
        (413, "request_too_large", "Request exceeds the maximum size", "context_overflow"),
        (503, None, "unavailable", "overloaded"),
        (502, None, "bad gateway", "server"),
    ],
)
def test_classification_table(status: int, error_type: str | None, message: str, kind: str) -> None:
    assert anthropic_errors.classify(status, error_type, message) == kind


def test_retry_after_header_forms() -> None:
    assert anthropic_errors.parse_retry_after({"retry-after": "3"}) == 3.0
    assert anthropic_errors.parse_retry_after({"retry-after-ms": "1500", "retry-after": "9"}) == 1.5
    assert anthropic_errors.parse_retry_after({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}) == 0.0
    assert anthropic_errors.parse_retry_after({}) is None


# ------------------------------------------------------------------ detection, model info, laziness


async def test_detects_the_default_model_from_env_or_config() -> None:
    assert await AnthropicProvider(AnthropicConfig(), env={"ANTHROPIC_API_KEY": "k"}).detect_default_model() == "claude-opus-4-5"
    assert await AnthropicProvider(AnthropicConfig(api_key="k"), env={}).detect_default_model() == "claude-opus-4-5"
    assert await AnthropicProvider(AnthropicConfig(), env={}).detect_default_model() is None
    assert AnthropicProvider.detect_priority == 10


def test_model_info_knows_claude_context_windows() -> None:
    provider = AnthropicProvider()
    assert provider.model_info("claude-opus-4-5").context_window == 200_000
    assert provider.model_info("claude-sonnet-4-5-20250929").max_output_tokens == 64_000
    assert provider.model_info("claude-3-5-haiku-latest").max_output_tokens == 8_192


def test_the_sdk_is_not_imported_until_the_first_call() -> None:
    code = (
        "import sys\n"
        "import clawbot_anthropic.plugin, clawbot_anthropic.provider\n"
        "from clawbot_anthropic.config import AnthropicConfig\n"
        "clawbot_anthropic.provider.AnthropicProvider(AnthropicConfig(), env={})\n"
        "print('anthropic' in sys.modules, 'httpx2' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False", "False"]


async def test_a_per_request_api_key_overrides_the_configured_one(fake_llm: FakeLLM) -> None:
    provider = make_provider(fake_llm)
    await provider.complete(make_request(api_key="sk-ant-profile-2"))
    headers = fake_llm.last_request.headers
    assert "sk-ant-profile-2" in (headers.get("x-api-key", "") + headers.get("authorization", ""))
    await provider.complete(make_request())
    headers = fake_llm.last_request.headers
    assert "sk-ant-secret" in (headers.get("x-api-key", "") + headers.get("authorization", ""))


def test_a_stream_without_message_stop_is_incomplete() -> None:
    from clawbot_anthropic.wire import StreamAccumulator

    acc = StreamAccumulator()
    acc.feed({"type": "message_start", "message": {"model": MODEL, "usage": {"input_tokens": 3, "output_tokens": 1}}})
    acc.feed({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}})
    assert acc.feed({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "half"}}) == "half"
    assert not acc.complete
    acc.feed({"type": "message_stop"})
    assert acc.complete


def test_out_of_order_messages_are_a_role_ordering_error() -> None:
    from clawbot import ProviderError
    from clawbot_anthropic.errors import classify

    text = "messages.2: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_01"
    assert classify(400, "invalid_request_error", text) == "role_ordering"
    assert "start a new session" in ProviderError("role_ordering").user_message
