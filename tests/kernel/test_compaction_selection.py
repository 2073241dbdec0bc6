"""Which compaction strategy an agent uses: the default name "summary" is a preference, any
other name, and an agent's own ``agents.list[].compaction.strategy``, must be installed."""

from __future__ import annotations

import pytest
from clawbot.agent.compaction import strategy_for
from clawbot.config import ConfigError
from clawbot.kernel import select
from clawbot.registry import Registry
from clawbot.testing import plugin_from_hooks

from ..plugins_for_tests import DropAllCompaction

KEY = "agents.defaults.compaction.strategy"
NONE_OFFERS = "no installed plugin offers the compaction strategy {!r} ({})"

SELECT = {  # (installed, configured) -> (in use, problem)
    "the default, not installed, one other: that one": (["trim"], "summary", ("trim", None)),
    "the default, not installed, none: none": ([], "summary", (None, None)),
    "the default, installed": (["summary", "trim"], "summary", ("summary", None)),
    "the default, not installed, several: name one": (["a", "b"], "summary", (None, "several compaction strategies are installed (a, b): name the one to use")),
    "another name, not installed: an error": (["trim"], "smart", (None, NONE_OFFERS.format("smart", "installed: trim"))),
    "another name, none installed: an error": ([], "smart", (None, NONE_OFFERS.format("smart", "none is installed"))),
    "empty: the only one": (["trim"], "", ("trim", None)),
}


@pytest.mark.parametrize("case", SELECT)
def test_the_default_strategy_name_is_a_preference_any_other_a_requirement(case: str) -> None:
    installed, configured, expected = SELECT[case]
    registry: Registry = Registry("compaction strategy")
    for name in installed:
        registry.add("p", name, DropAllCompaction(name))
    assert select(registry, configured, KEY, "summary") == expected


def strategies(*names: str) -> dict[str, object]:
    return {"compaction": plugin_from_hooks(clawbot_compaction_strategies=lambda ctx: [DropAllCompaction(n) for n in names])}


AGENTS = '[[agents.list]]\nid = "main"\ndefault = true\n\n[[agents.list]]\nid = "helper"\ncompaction = {{ strategy = "{}" }}\n'


async def test_an_agent_uses_its_own_strategy_and_the_others_the_default(make_kernel) -> None:
    kernel = await make_kernel(plugins=strategies("summary", "trim"), config=AGENTS.format("trim"))
    assert strategy_for(kernel, "main").name == "summary"
    assert strategy_for(kernel, "helper").name == "trim"


@pytest.mark.parametrize("installed", [("summary",), ()])
async def test_an_agents_strategy_nobody_offers_is_a_config_error_naming_its_key(make_kernel, installed) -> None:
    # even "summary": an agent that names a strategy wants that one
    with pytest.raises(ConfigError) as info:
        await make_kernel(plugins=strategies(*installed), config=AGENTS.format("trim" if installed else "summary"))
    assert "agents.list[1].compaction.strategy: no installed plugin offers the compaction strategy" in str(info.value)
