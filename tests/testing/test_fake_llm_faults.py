"""Faults on demand: each kind makes the real SDKs raise their matching exception."""

from __future__ import annotations

import time
from typing import Any

import anthropic
import httpx2
import openai
import pytest
from clawbot.testing.fake_llm import IN_PROCESS_URL, FakeLLM

USER = [{"role": "user", "content": "hi"}]


async def call_anthropic(client: anthropic.AsyncAnthropic, model: str = "claude-test", **kw: Any) -> Any:
    return await client.messages.create(model=model, max_tokens=64, messages=USER, **kw)


async def call_chat(client: openai.AsyncOpenAI, model: str = "gpt-test", **kw: Any) -> Any:
    return await client.chat.completions.create(model=model, messages=USER, **kw)


async def call_responses(client: openai.AsyncOpenAI, model: str = "gpt-test", **kw: Any) -> Any:
    return await client.responses.create(model=model, input="hi", **kw)


ANTHROPIC_FAULTS = [
    ("rate_limit", anthropic.RateLimitError, 429, "rate_limit_error"),
    ("server_error", anthropic.InternalServerError, 500, "api_error"),
    ("overloaded", anthropic.OverloadedError, 529, "overloaded_error"),
    ("auth", anthropic.AuthenticationError, 401, "authentication_error"),
    ("billing", anthropic.PaymentRequiredError, 402, "billing_error"),
    ("context_length", anthropic.BadRequestError, 400, "invalid_request_error"),
]

OPENAI_FAULTS = [
    ("rate_limit", openai.RateLimitError, 429, "rate_limit_exceeded"),
    ("server_error", openai.InternalServerError, 500, None),
    ("overloaded", openai.InternalServerError, 503, None),
    ("auth", openai.AuthenticationError, 401, "invalid_api_key"),
    ("billing", openai.RateLimitError, 429, "insufficient_quota"),
    ("context_length", openai.BadRequestError, 400, "context_length_exceeded"),
]


@pytest.mark.parametrize(("kind", "exc_type", "status", "error_type"), ANTHROPIC_FAULTS)
async def test_anthropic_fault_kinds(
    fake: FakeLLM, anthropic_client: anthropic.AsyncAnthropic, kind: str, exc_type: type, status: int, error_type: str
) -> None:
    fake.fail(kind)
    fake.reply("after the fault")
    with pytest.raises(exc_type) as caught:
        await call_anthropic(anthropic_client)
    assert caught.value.status_code == status
    assert caught.value.body["type"] == "error"
    assert caught.value.body["error"]["type"] == error_type
    assert caught.value.request_id
    if kind == "context_length":
        assert caught.value.body["error"]["message"] == "prompt is too long: 210000 tokens > 200000 maximum"
    # The fault is used up and did not eat the scripted reply.
    message = await call_anthropic(anthropic_client)
    assert message.content[0].text == "after the fault"


@pytest.mark.parametrize("call", [call_chat, call_responses], ids=["chat", "responses"])
@pytest.mark.parametrize(("kind", "exc_type", "status", "code"), OPENAI_FAULTS)
async def test_openai_fault_kinds(
    fake: FakeLLM, openai_client: openai.AsyncOpenAI, call: Any, kind: str, exc_type: type, status: int, code: str | None
) -> None:
    fake.fail(kind)
    with pytest.raises(exc_type) as caught:
        await call(openai_client)
    assert caught.value.status_code == status
    assert caught.value.code == code
    assert caught.value.body["message"]
    assert caught.value.request_id
    if kind == "context_length":
        assert caught.value.param == ("messages" if call is call_chat else "input")
    assert fake.pending_faults == 0


async def test_rate_limit_exposes_retry_after(fake: FakeLLM, anthropic_client: anthropic.AsyncAnthropic, openai_client: openai.AsyncOpenAI) -> None:
    fake.fail("rate_limit", retry_after=7)
    fake.fail("rate_limit", retry_after=2.5)
    with pytest.raises(anthropic.RateLimitError) as a_err:
        await call_anthropic(anthropic_client)
    with pytest.raises(openai.RateLimitError) as o_err:
        await call_chat(openai_client)
    assert a_err.value.response.headers["retry-after"] == "7"
    assert o_err.value.response.headers["retry-after"] == "2.5"
    assert "try again in 2.5s" in o_err.value.message


async def test_times_and_custom_status_and_message(fake: FakeLLM, anthropic_client: anthropic.AsyncAnthropic) -> None:
    fake.fail("server_error", times=2, status=503, message="upstream is down")
    for _ in range(2):
        with pytest.raises(anthropic.ServiceUnavailableError) as caught:
            await call_anthropic(anthropic_client)
        assert caught.value.body["error"]["message"] == "upstream is down"
    assert (await call_anthropic(anthropic_client)).content[0].text == "ok"


@pytest.mark.parametrize("sdk", ["anthropic", "openai"])
async def test_sdk_retries_a_single_500_transparently(fake: FakeLLM, sdk: str) -> None:
    fake.fail("server_error", retry_after=0.01)  # keep the SDK's back-off short
    fake.reply("recovered")
    if sdk == "anthropic":
        client: Any = anthropic.AsyncAnthropic(api_key="test", base_url=IN_PROCESS_URL, http_client=fake.http_client(), max_retries=2)
        text = (await call_anthropic(client)).content[0].text
    else:
        client = openai.AsyncOpenAI(api_key="test", base_url=IN_PROCESS_URL + "/v1", http_client=fake.http_client(), max_retries=2)
        text = (await call_chat(client)).choices[0].message.content
    assert text == "recovered"
    assert len(fake.requests) == 2
    assert [r.headers.get("x-stainless-retry-count") for r in fake.requests] == ["0", "1"]


async def test_fault_targeted_at_one_model(fake: FakeLLM, anthropic_client: anthropic.AsyncAnthropic) -> None:
    fake.fail("overloaded", model="claude-primary")
    fake.reply("from the fallback")
    fake.reply("primary is back")
    message = await call_anthropic(anthropic_client, model="claude-fallback")
    assert message.content[0].text == "from the fallback"
    with pytest.raises(anthropic.OverloadedError):
        await call_anthropic(anthropic_client, model="claude-primary")
    message = await call_anthropic(anthropic_client, model="claude-primary")
    assert message.content[0].text == "primary is back"
    assert [r.model for r in fake.requests] == ["claude-fallback", "claude-primary", "claude-primary"]


async def test_dropped_stream_anthropic(fake: FakeLLM, anthropic_client: anthropic.AsyncAnthropic) -> None:
    fake.fail("dropped_stream", after_events=4)
    fake.reply("a reply long enough to need several text deltas")
    seen: list[str] = []
    with pytest.raises(httpx2.RemoteProtocolError):
        async with anthropic_client.messages.stream(model="claude-test", max_tokens=64, messages=USER) as stream:
            async for event in stream:
                seen.append(event.type)
    assert seen[0] == "message_start" and "text" in seen
    assert "message_stop" not in seen
    # The reply is still queued: a retry gets it whole.
    async with anthropic_client.messages.stream(model="claude-test", max_tokens=64, messages=USER) as stream:
        final = await stream.get_final_message()
    assert final.content[0].text == "a reply long enough to need several text deltas"


async def test_dropped_stream_openai(fake: FakeLLM, openai_client: openai.AsyncOpenAI) -> None:
    fake.fail("dropped_stream", after_events=3)
    fake.fail("dropped_stream", after_events=5)
    fake.reply("a reply long enough to need several text deltas")
    chunks: list[Any] = []
    with pytest.raises(openai.APIConnectionError):
        stream = await openai_client.chat.completions.create(model="gpt-test", messages=USER, stream=True)
        async for chunk in stream:
            chunks.append(chunk)
    assert len(chunks) == 3 and all(c.choices[0].finish_reason is None for c in chunks)
    events: list[str] = []
    with pytest.raises(openai.APIConnectionError):
        async with openai_client.responses.stream(model="gpt-test", input="hi") as rstream:
            async for event in rstream:
                events.append(event.type)
    assert events[0] == "response.created" and "response.completed" not in events


async def test_dropped_non_streaming_body(fake: FakeLLM, anthropic_client: anthropic.AsyncAnthropic, openai_client: openai.AsyncOpenAI) -> None:
    fake.fail("dropped_stream", times=2)
    with pytest.raises(anthropic.APIConnectionError) as a_err:
        await call_anthropic(anthropic_client)
    with pytest.raises(openai.APIConnectionError):
        await call_responses(openai_client)
    assert isinstance(a_err.value.__cause__, httpx2.RemoteProtocolError)


async def test_dropped_stream_with_the_buffering_transport(fake: FakeLLM) -> None:
    client = anthropic.AsyncAnthropic(api_key="test", base_url=IN_PROCESS_URL, http_client=fake.http_client(streaming=False), max_retries=0)
    fake.fail("dropped_stream")
    with pytest.raises(anthropic.APIConnectionError):
        async with client.messages.stream(model="claude-test", max_tokens=64, messages=USER) as stream:
            await stream.get_final_message()
    async with client.messages.stream(model="claude-test", max_tokens=64, messages=USER) as stream:
        assert (await stream.get_final_message()).content[0].text == "ok"


async def test_slow_delays_then_answers(fake: FakeLLM, openai_client: openai.AsyncOpenAI) -> None:
    fake.fail("slow", delay=0.2)
    fake.reply("eventually")
    started = time.monotonic()
    completion = await call_chat(openai_client)
    assert time.monotonic() - started >= 0.2
    assert completion.choices[0].message.content == "eventually"


async def test_slow_trips_the_sdk_timeout(fake: FakeLLM, anthropic_client: anthropic.AsyncAnthropic) -> None:
    fake.fail("slow", delay=60)
    with pytest.raises(anthropic.APITimeoutError):
        await call_anthropic(anthropic_client, timeout=0.05)


async def test_strict_script_exhaustion_is_a_500_not_retried() -> None:
    fake = FakeLLM(["only reply"], strict=True)
    client = anthropic.AsyncAnthropic(api_key="test", base_url=IN_PROCESS_URL, http_client=fake.http_client(), max_retries=2)
    assert (await call_anthropic(client)).content[0].text == "only reply"
    with pytest.raises(anthropic.InternalServerError) as caught:
        await call_anthropic(client)
    assert "script ran out" in caught.value.body["error"]["message"]
    assert len(fake.requests) == 2  # no SDK retry of the exhaustion error


def test_unknown_fault_kind_is_rejected() -> None:
    with pytest.raises(ValueError, match="kind"):
        FakeLLM().fail("meteor_strike")
    with pytest.raises(TypeError):
        FakeLLM().fail("slow", dealy=1)
