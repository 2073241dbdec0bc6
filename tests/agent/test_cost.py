"""Usage and cost per turn and per session."""

from __future__ import annotations

import pytest
from clawbot.agent.conversation import Conversation
from clawbot.agent.models import ModelChoice

from .scripted import ScriptedProvider, call

PRICES = """
[[usage.prices]]
model = "scripted/m"
input = 3.0
output = 15.0
cache_read = 0.3
"""


async def test_cost_is_computed_per_turn_and_summed_per_session(make_kernel) -> None:
    from clawbot import Tool, ToolResult
    from clawbot.testing import plugin_from_hooks

    noop = plugin_from_hooks(clawbot_tools=lambda ctx: [Tool("noop", "Nothing.", {"type": "object"}, lambda c: ToolResult.text("ok"))])
    kernel = await make_kernel(plugins={"noop": noop}, config=PRICES)
    provider = ScriptedProvider([call("noop", "c1")], "done", "again")  # each reply: 10 in, 2 out
    conv = Conversation(kernel, ModelChoice(provider, "m"), "main", services=None)
    first = await conv.send("agent:main:main", "go")
    assert first.usage.input_tokens == 20 and first.usage.output_tokens == 4
    assert first.cost_usd == pytest.approx((20 * 3.0 + 4 * 15.0) / 1e6)
    second = await conv.send("agent:main:main", "more")
    info = kernel.sessions.get("agent:main:main")
    assert info.turns == 2 and info.cost_usd == pytest.approx(first.cost_usd + second.cost_usd)


async def test_no_price_means_no_cost(make_kernel) -> None:
    kernel = await make_kernel()
    result = await Conversation(kernel, ModelChoice(ScriptedProvider("hi"), "m"), "main", services=None).send("agent:main:main", "x")
    assert result.cost_usd is None and kernel.sessions.get("agent:main:main").cost_usd is None
