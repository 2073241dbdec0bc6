"""A provider that fails (rate limited, down) reaches the chat as the core's short text,
never as a traceback or the provider's raw detail. Real providers against the fake LLM."""

from __future__ import annotations

import pytest

from ..e2e.e2etools import make_provider, providers_plugin
from .chatkit import open_chat

# the core's words: a rate limit says when the only key is used again
SHORT = {
    "rate_limit": "The model provider is rate-limiting requests (anthropic, key ",
    "server_error": "The model provider had an internal error. Try again.",
}
CONFIG = '[agents.defaults.model]\nprimary = "anthropic/claude-test"\n'


@pytest.mark.parametrize("kind", ["rate_limit", "server_error"])
async def test_a_provider_error_reaches_the_chat_as_a_short_text(make_kernel, fake_channel, fake_llm, kind) -> None:
    anthropic = make_provider("anthropic", fake_llm)
    chat = await open_chat(make_kernel, fake_channel, anthropic, config=CONFIG, plugins={"llm": providers_plugin(anthropic)}, model="claude-test")
    fake_llm.fail(kind, times=20, retry_after=0.01)
    await fake_channel.inject("hello")
    await chat.close()
    (sent,) = fake_channel.sent
    assert sent.text.startswith(SHORT[kind]) and sent.notice, sent.text
    assert "Traceback" not in sent.text and "fake" not in sent.text.lower() and len(sent.text) < 300
