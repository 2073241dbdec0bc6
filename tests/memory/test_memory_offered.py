"""The memory tools, and the prompt's Memory Recall section with them, are offered only while
a memory provider is active and the tool policy allows them: what the model is sent in a
real turn (``clawbot agent -m`` on the fake LLM), and what ``clawbot context`` reports."""

from __future__ import annotations

import json
from pathlib import Path

import clawbot_tools.plugin
import pytest

from . import filememory
from .memkit import NO_PROVIDER_ENV, clawbot, setup_home

CASES = [
    # (extra config, environment, tools the model gets, Memory Recall in the prompt)
    ("", {}, {"memory_search", "memory_get"}, True),
    ("", NO_PROVIDER_ENV, set(), False),
    ('[tools]\ndeny = ["memory_search"]\n\n', {}, {"memory_get"}, False),
    ('[tools]\ndeny = ["group:memory"]\n\n', {}, set(), False),
]


@pytest.mark.parametrize(("extra", "env", "offered", "recall"), CASES, ids=["provider", "no-provider", "deny-search", "deny-group"])
def test_the_tools_and_the_recall_section_follow_the_provider_and_the_policy(
    clawbot_home: Path, site: Path, fake_llm_thread, extra: str, env: dict, offered: set, recall: bool
) -> None:
    setup_home(clawbot_home, site, fake_llm_thread.base_url, extra)
    fake_llm_thread.reply("ok")
    run = clawbot(clawbot_home, "agent", "-m", "hi", env=env)
    assert run.returncode == 0, run.stderr
    (request,) = fake_llm_thread.requests
    assert {t for t in request.tools if t.startswith("memory_")} == offered
    assert "read" in request.tools  # the other tools are there either way
    system = json.dumps(request.system)
    assert ("## Memory Recall" in system) is recall
    assert ("memory_search" in system) is ("memory_search" in offered)

    report = json.loads(clawbot(clawbot_home, "context", "--json", env=env).stdout)
    assert {t["name"] for t in report["tools"]["entries"] if t["name"].startswith("memory_")} == offered


async def test_a_memory_tool_is_usable_only_with_an_active_provider(make_kernel) -> None:
    from clawbot.agent.policy import agent_tools

    without = await make_kernel(plugins={"tools": clawbot_tools.plugin})
    assert "memory_search" in without.tools and not {"memory_search", "memory_get"} & set(agent_tools(without, "main"))
    with_provider = await make_kernel(plugins={"tools": clawbot_tools.plugin, filememory.MODULE: filememory})
    assert {"memory_search", "memory_get"} <= set(agent_tools(with_provider, "main"))
