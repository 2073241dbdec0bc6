"""A plugin's ``clawbot_compaction_near`` that never finishes is its own failure: the turn goes on."""

from __future__ import annotations

import asyncio

from clawbot import CompactionResult, CompactionStrategy, Usage
from clawbot.agent.conversation import Conversation
from clawbot.agent.models import ModelChoice

from ..plugins_for_tests import OverflowingProvider, plugin

KEY = "agent:main:main"
# a window of 20,000 tokens, compaction at 16,000, the line before it 4,000 lower; one second per plugin
CONFIG = (
    "[agents.defaults.compaction]\nreserve_tokens_floor = 4000\nnear_timeout_seconds = 1\n"
    "[agents.defaults.compaction.memory_flush]\nsoft_threshold_tokens = 4000\n"
)


class Summariser(CompactionStrategy):
    name = "summary"

    async def compact(self, request):
        return CompactionResult("we talked about cats", first_kept_index=len(request.messages) - 1, tokens_before=900, tokens_after=100)


async def test_a_hanging_compaction_near_plugin_is_recorded_and_the_turn_and_the_other_plugins_go_on(make_kernel) -> None:
    async def hang(event):
        await asyncio.Event().wait()  # a plugin stuck on something that never answers

    async def note(event):
        return Usage(input_tokens=7)

    kernel = await make_kernel(
        plugins={
            "stuck": plugin(clawbot_compaction_strategies=lambda ctx: [Summariser()], clawbot_compaction_near=hang),
            "noter": plugin(clawbot_compaction_near=note),
        },
        config=CONFIG,
    )
    conversation = Conversation(kernel, ModelChoice(OverflowingProvider(), "m", context_tokens=20_000), "main", services=None)
    await conversation.send(KEY, "short")
    result = await conversation.send(KEY, "long " * 11_200)
    assert result.text.startswith("reply") and result.usage.input_tokens >= 7  # the other plugin still ran
    (failure,) = kernel.plugins.failures
    assert failure.plugin == "stuck" and failure.hook == "clawbot_compaction_near"
    assert "did not finish within 1 s (agents.defaults.compaction.near_timeout_seconds)" in failure.error
