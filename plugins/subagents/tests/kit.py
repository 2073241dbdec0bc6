"""What the sub-agent tests share: waiting for what a running gateway does, and the models
(a provider of the test's own, or the real Anthropic one on the fake LLM) as plugins."""

from __future__ import annotations

import asyncio
from typing import Any

from clawbot.testing import plugin_from_hooks
from clawbot.testing.fake_llm import IN_PROCESS_URL, FakeLLM
from clawbot_anthropic.config import AnthropicConfig
from clawbot_anthropic.provider import AnthropicProvider


async def eventually(predicate: Any, timeout: float = 30.0) -> None:
    async with asyncio.timeout(timeout):
        while not predicate():
            await asyncio.sleep(0.01)


def anthropic_on(fake: FakeLLM) -> Any:
    """The real Anthropic provider (the official SDK) talking to ``fake`` in process."""
    return AnthropicProvider(AnthropicConfig(api_key="sk-primary", base_url=IN_PROCESS_URL), http_client=fake.http_client())


def providers_plugin(*providers: Any) -> object:
    return plugin_from_hooks(clawbot_llm_providers=lambda ctx: list(providers))
