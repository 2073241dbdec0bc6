"""What the user's tool policy sees of the bundled tools is their own data: their place in the
list the model reads (``order``), the profiles that offer them and their groups. The kernel
names no tool, so these pin the order and the profiles ``tools.profile`` has always meant.

The tables name every tool that was ever bundled here; one that moves to a plugin of its own
(cron, sessions_spawn) takes its data along and is checked only while it is here."""

from __future__ import annotations

import pytest
from clawbot.promptkit import ordered_tools
from clawbot_tools.config import ToolsSettings
from clawbot_tools.registry import all_tools

LISTED = (
    "read", "write", "edit", "apply_patch", "grep", "find", "ls",
    "exec", "process", "web_search", "web_fetch", "message",
    "agents_list", "sessions_list", "sessions_history", "sessions_send", "sessions_spawn", "session_status",
    "memory_search", "memory_get", "cron",
)  # fmt: skip
GROUPS = {
    "fs": {"read", "write", "edit", "apply_patch", "grep", "find", "ls"},
    "runtime": {"exec", "process"},
    "web": {"web_search", "web_fetch"},
    "messaging": {"message"},
    "sessions": {"agents_list", "sessions_list", "sessions_history", "sessions_send", "sessions_spawn", "session_status"},
    "memory": {"memory_search", "memory_get"},
    "automation": {"cron"},
}
PROFILES = {
    "minimal": {"session_status"},
    "coding": GROUPS["fs"] | GROUPS["runtime"] | GROUPS["sessions"] | GROUPS["memory"],
    "messaging": {"message", "sessions_list", "sessions_history", "sessions_send", "session_status"},
}


@pytest.fixture
def tools():
    tools = all_tools(ToolsSettings(web_search_api_key="k-test"))
    assert {t.name for t in tools} <= set(LISTED), "a new tool: add it to the tables above"
    return tools


def _here(names: set[str], tools) -> set[str]:
    return names & {t.name for t in tools}


def test_the_bundled_tools_are_listed_in_one_fixed_order_each_at_its_own_place(tools) -> None:
    assert tuple(t.name for t in ordered_tools(reversed(tools))) == tuple(n for n in LISTED if _here({n}, tools))
    places = [t.order for t in tools]
    assert None not in places and len(set(places)) == len(places)


def test_each_bundled_tool_is_in_its_group(tools) -> None:
    assert {group: {t.name for t in tools if t.group == group} for group in GROUPS} == {g: _here(n, tools) for g, n in GROUPS.items()}


@pytest.mark.parametrize("profile", sorted(PROFILES))
def test_each_profile_offers_the_bundled_tools_it_always_did(tools, profile: str) -> None:
    assert {t.name for t in tools if profile in t.profiles} == _here(PROFILES[profile], tools)


def test_only_the_memory_tools_wait_for_a_memory_provider(tools) -> None:
    assert {t.name for t in tools if t.needs_memory} == _here(GROUPS["memory"], tools) == GROUPS["memory"]
