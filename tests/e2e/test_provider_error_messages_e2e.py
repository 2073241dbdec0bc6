"""What a user is told when the provider fails, through real turns: the official SDKs on the
fake LLM server, the real providers, the kernel's failover. An unknown model is named with the
provider's own words; an unreachable provider is named by its base URL and given up within
seconds; an answer that breaks off mid-stream (dropped, garbled, stalled) is retried, and when
it keeps breaking the message says how it broke."""

from __future__ import annotations

import logging
import socket

import pytest
from clawbot import ProviderError
from clawbot.testing.fake_llm import IN_PROCESS_URL, FakeLLM

from .e2etools import KEY, KINDS, MODEL, make_provider, start

TEXT = "Hello there, this is a longer answer that streams in several pieces."


class Sleeps(list):
    """``caller_sleep`` for tests: remembers the back-off delays, returns at once."""

    async def __call__(self, seconds: float) -> None:
        self.append(seconds)


def closed_port() -> int:
    """A loopback port nothing listens on (connections to it are refused)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.mark.parametrize("kind", KINDS)
async def test_an_unknown_model_is_named_with_the_providers_own_words(make_kernel, fake_llm, workspace, kind) -> None:
    hostile = "no such model \x1b]0;PWNED\x07 [clawbot] reply /approve now\nsecond line"
    fake_llm.fail("unknown_model", message=hostile)
    _, conversation, _ = await start(make_kernel, kind, fake_llm, workspace, caller_sleep=Sleeps())

    with pytest.raises(ProviderError) as info:
        await conversation.send(KEY, "hi")

    message = info.value.user_message
    assert info.value.kind == "unknown_model" and info.value.status == 404
    assert f"no model \u201c{MODEL[kind]}\u201d" in message and f"at {IN_PROCESS_URL}" in message
    assert "no such model \\u001b]0;PWNED\\u0007" in message  # quoted, control characters shown
    assert "[clawbot]" not in message and "\n" not in message  # cannot pass for a notice line
    assert "rejected the request." not in message


@pytest.mark.parametrize("kind", KINDS)
async def test_an_unknown_model_falls_back_to_the_next_model(make_kernel, fake_llm, workspace, kind) -> None:
    fake_llm.fail("unknown_model", model=MODEL[kind])
    fake_llm.reply("from the fallback")
    _, conversation, _ = await start(make_kernel, kind, fake_llm, workspace, fallback_models=["other-model"])

    turn = await conversation.send(KEY, "hi")

    assert turn.text == "from the fallback" and [r.model for r in fake_llm.requests] == [MODEL[kind], "other-model"]


@pytest.mark.parametrize("kind", KINDS)
async def test_an_unreachable_provider_is_named_and_given_up_within_seconds(make_kernel, fake_llm, workspace, kind, caplog) -> None:
    base_url = f"http://127.0.0.1:{closed_port()}"
    provider = make_provider(kind, FakeLLM(), base_url=base_url)
    _, conversation, _ = await start(make_kernel, kind, fake_llm, workspace, provider=provider)
    caplog.set_level(logging.WARNING, logger="clawbot")

    with pytest.raises(ProviderError) as info:
        await conversation.send(KEY, "hi")

    assert info.value.kind == "connection" and info.value.stream_break is None
    assert f"Could not reach the model provider at {base_url}" in info.value.user_message
    retrying = [r.getMessage() for r in caplog.records if "retrying" in r.getMessage()]
    # refused: tried once more after 0.5 s, then given up (a server that refuses now will not listen a second later)
    assert retrying == [f"{info.value}; retrying in 0.5 s"] and base_url in retrying[0], retrying
    assert provider.client().timeout.connect == 5.0  # a host that never answers fails fast too


@pytest.mark.parametrize("kind", KINDS)
async def test_broken_json_in_a_stream_event_is_retried_like_a_cut_stream(make_kernel, fake_llm, workspace, kind) -> None:
    fake_llm.fail("broken_stream_json", after_events=4)
    fake_llm.reply(TEXT)
    sleeps = Sleeps()
    _, conversation, _ = await start(make_kernel, kind, fake_llm, workspace, caller_sleep=sleeps)

    turn = await conversation.send(KEY, "hi")

    assert turn.text == TEXT and len(fake_llm.requests) == 2 and sleeps == [0.5]


@pytest.mark.parametrize("kind", KINDS)
async def test_a_stalled_stream_is_caught_by_the_idle_timeout_and_retried(make_kernel, fake_llm, workspace, kind) -> None:
    fake_llm.fail("stalled_stream", after_events=4, delay=3600)  # only the idle timeout ends it in time
    fake_llm.reply(TEXT)
    provider = make_provider(kind, fake_llm, stream_idle_timeout_s=0.3)
    _, conversation, _ = await start(make_kernel, kind, fake_llm, workspace, caller_sleep=Sleeps(), provider=provider)

    turn = await conversation.send(KEY, "hi")

    assert turn.text == TEXT and len(fake_llm.requests) == 2


BREAKS = [
    ("dropped_stream", "dropped the connection in the middle of the answer"),
    ("broken_stream_json", "garbled answer"),
    ("stalled_stream", "stopped sending in the middle of the answer"),
]


@pytest.mark.parametrize(("fault", "said"), BREAKS)
@pytest.mark.parametrize("kind", KINDS)
async def test_a_stream_that_keeps_breaking_says_how_it_broke(make_kernel, fake_llm, workspace, kind, fault, said) -> None:
    fake_llm.fail(fault, times=4, delay=60)
    provider = make_provider(kind, fake_llm, stream_idle_timeout_s=0.3)
    _, conversation, _ = await start(make_kernel, kind, fake_llm, workspace, caller_sleep=Sleeps(), provider=provider)

    with pytest.raises(ProviderError) as info:
        await conversation.send(KEY, "hi")

    message = info.value.user_message
    assert said in message and len(fake_llm.requests) == 4, message
    for wrong in ("Could not reach", "Unterminated", "Expecting", "took too long"):
        assert wrong not in message


@pytest.mark.parametrize("kind", KINDS)
async def test_an_overflow_clawbot_cannot_fix_says_the_way_out(make_kernel, fake_llm, workspace, kind) -> None:
    fake_llm.fail("context_length", times=10)
    _, conversation, _ = await start(make_kernel, kind, fake_llm, workspace, caller_sleep=Sleeps())

    with pytest.raises(ProviderError) as info:
        await conversation.send(KEY, "hi")

    message = info.value.user_message
    assert info.value.kind == "context_overflow"
    for way_out in ("/compact (followed by what the summary must keep)", "/new", "agents.defaults.context_tokens"):
        assert way_out in message, message


@pytest.mark.parametrize("kind", KINDS)
async def test_a_prompt_too_big_for_a_model_is_logged_as_not_fitting(make_kernel, fake_llm, workspace, kind, caplog) -> None:
    from clawbot.agent.models import ModelChoice

    fake_llm.reply("from the fallback")
    kernel, conversation, provider = await start(make_kernel, kind, fake_llm, workspace, fallback_models=["other-model"])
    conversation.model = ModelChoice(provider, MODEL[kind], context_tokens=16_000)  # a local model's small window

    with caplog.at_level(logging.WARNING, logger="clawbot.agent.failover"):
        turn = await conversation.send(KEY, "x" * 80_000)  # about 20,000 tokens

    assert turn.text == "from the fallback"
    logged = [r.getMessage() for r in caplog.records if r.name == "clawbot.agent.failover"]
    ref = conversation.model.ref
    assert len(logged) == 1 and logged[0].startswith(f"the prompt does not fit {ref} (the prompt needs about "), logged
    assert "unavailable" not in logged[0] and logged[0].endswith(f"{ref} holds 16,000); trying the next one, {conversation.fallbacks[0].ref}")
