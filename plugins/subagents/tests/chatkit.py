"""A running chat for the sub-agent tests: real kernel, runtime, gateway and turns on the fake
channel; only the model is scripted (a provider, or the real Anthropic one on the fake LLM)."""

from __future__ import annotations

import asyncio
from typing import Any

from clawbot import Tool
from clawbot.agent.models import ModelChoice
from clawbot.agent.runtime import AgentRuntime
from clawbot.gateway.runner import Gateway
from clawbot.testing import plugin_from_hooks
from clawbot.testing.fake_llm import IN_PROCESS_URL, FakeLLM


class Chat:
    """A gateway serving ``channel`` with one agent ``main`` answering through ``provider``."""

    def __init__(self, kernel: Any, runtime: AgentRuntime, gateway: Gateway, task: asyncio.Task[None]) -> None:
        self.kernel, self.runtime, self.gateway, self.task = kernel, runtime, gateway, task

    async def close(self) -> None:
        self.gateway.stop()
        await self.task
        await self.runtime.aclose()
        await self.kernel.aclose()


async def open_chat(
    make_kernel: Any, channel: Any, provider: Any, *, tools: list[Tool] = (), config: str = "", plugins: dict | None = None, model: str = "m"
) -> Chat:
    tool_plugin = plugin_from_hooks(clawbot_tools=lambda ctx: list(tools))
    kernel = await make_kernel(plugins={"fake": channel.as_plugin(), "chat-tools": tool_plugin, **(plugins or {})}, config=config)
    runtime = AgentRuntime(kernel)
    await runtime.conversation("main", chain=[ModelChoice(provider, model)])
    gateway = Gateway(kernel, runtime.respond, "main", runtime=runtime)
    task = asyncio.create_task(gateway.run([channel]))
    await channel.wait_started()
    return Chat(kernel, runtime, gateway, task)


async def eventually(predicate: Any, timeout: float = 30.0) -> None:
    async with asyncio.timeout(timeout):
        while not predicate():
            await asyncio.sleep(0.01)


def anthropic_on(fake: FakeLLM) -> Any:
    """The real Anthropic provider (the official SDK) talking to ``fake`` in process."""
    from clawbot_anthropic.config import AnthropicConfig
    from clawbot_anthropic.provider import AnthropicProvider

    return AnthropicProvider(AnthropicConfig(api_key="sk-primary", base_url=IN_PROCESS_URL), http_client=fake.http_client())


def providers_plugin(*providers: Any) -> object:
    return plugin_from_hooks(clawbot_llm_providers=lambda ctx: list(providers))
