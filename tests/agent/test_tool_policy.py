"""Tool policy: profiles, allow, deny, groups, per-agent overrides; the model sees only allowed tools."""

from __future__ import annotations

import pytest
from clawbot import Tool, ToolResult
from clawbot.agent.conversation import Conversation
from clawbot.agent.models import ModelChoice
from clawbot.agent.policy import allowed_tools
from clawbot.testing import plugin_from_hooks

from .scripted import ScriptedProvider, call


def _tool(name: str, group: str | None, *profiles: str) -> Tool:
    return Tool(name, f"{name} tool", {"type": "object"}, lambda c: ToolResult.text(f"ran {c.tool_name}"), group=group, profiles=profiles)


# Groups and profiles as the bundled tools declare them.
TOOLS = [
    _tool("read", "fs", "coding"),
    _tool("write", "fs", "coding"),
    _tool("exec", "runtime", "coding"),
    _tool("web_fetch", "web"),
    _tool("message", "messaging", "messaging"),
    _tool("session_status", "sessions", "minimal", "coding", "messaging"),
    _tool("sessions_send", "sessions", "coding", "messaging"),
    _tool("weather", None),
]
PLUGIN = plugin_from_hooks(clawbot_tools=lambda ctx: TOOLS)


async def _names(make_kernel, config: str, agent: str = "main") -> list[str]:
    kernel = await make_kernel(plugins={"t": PLUGIN}, config=config)
    return sorted(allowed_tools(kernel.tools, kernel.config, agent))


async def test_profiles(make_kernel) -> None:
    assert await _names(make_kernel, '[tools]\nprofile = "minimal"\n') == ["session_status"]
    assert await _names(make_kernel, '[tools]\nprofile = "coding"\n') == ["exec", "read", "session_status", "sessions_send", "write"]
    assert await _names(make_kernel, '[tools]\nprofile = "messaging"\n') == ["message", "session_status", "sessions_send"]
    assert len(await _names(make_kernel, "")) == len(TOOLS)  # full by default


async def test_allow_narrows_and_deny_always_wins(make_kernel) -> None:
    config = '[tools]\nallow = ["group:fs", "exec", "weather"]\ndeny = ["write"]\n'
    assert await _names(make_kernel, config) == ["exec", "read", "weather"]
    assert await _names(make_kernel, '[tools]\ndeny = ["*"]\n') == []
    assert await _names(make_kernel, '[tools]\nprofile = "coding"\nallow = ["web_fetch"]\n') == []  # not in the profile


async def test_an_agent_policy_overrides_what_it_sets_and_never_the_global_deny(make_kernel) -> None:
    config = (
        '[tools]\nprofile = "minimal"\ndeny = ["exec"]\n\n'
        '[[agents.list]]\nid = "main"\ndefault = true\n\n'
        '[[agents.list]]\nid = "coder"\n'
        'tools = { profile = "full", allow = ["read", "write", "exec", "message"], deny = ["message"] }\n'
    )
    assert await _names(make_kernel, config, "main") == ["session_status"]
    assert await _names(make_kernel, config, "coder") == ["read", "write"]


async def test_an_agent_table_inherits_the_profile_and_allow_list_it_does_not_set(make_kernel) -> None:
    """A per-agent table must never widen access by leaving a key out."""
    minimal = '[tools]\nprofile = "minimal"\n\n[[agents.list]]\nid = "main"\ntools = { deny = ["weather"] }\n'
    assert await _names(make_kernel, minimal) == ["session_status"]
    allow = '[tools]\nallow = ["read"]\n\n[[agents.list]]\nid = "main"\ntools = { deny = ["write"] }\n'
    assert await _names(make_kernel, allow) == ["read"]
    narrowed = '[tools]\nprofile = "coding"\n\n[[agents.list]]\nid = "main"\ntools = { allow = ["read", "web_fetch"] }\n'
    assert await _names(make_kernel, narrowed) == ["read"]  # web_fetch is outside the inherited coding profile


async def test_a_plugin_tool_joins_a_profile_only_by_naming_it(make_kernel) -> None:
    """A group says nothing about profiles: a third plugin's ``fs`` tool that names no profile
    is offered under ``full`` only."""
    extra = plugin_from_hooks(clawbot_tools=lambda ctx: [_tool("fs_stat", "fs"), _tool("fs_tree", "fs", "coding")])
    kernel = await make_kernel(plugins={"t": PLUGIN, "extra": extra}, config='[tools]\nprofile = "coding"\n')
    assert sorted(allowed_tools(kernel.tools, kernel.config, "main")) == ["exec", "fs_tree", "read", "session_status", "sessions_send", "write"]


def test_a_tool_naming_an_unknown_profile_is_refused_naming_the_tool_and_the_profiles() -> None:
    with pytest.raises(ValueError, match="tool 'weather' names unknown profile\\(s\\) 'codng'; the profiles are minimal, coding, messaging, full"):
        _tool("weather", None, "codng")


async def test_patterns_ignore_case_and_take_wildcards(make_kernel) -> None:
    assert await _names(make_kernel, '[tools]\ndeny = ["Exec", "SESSION*", "group:FS"]\n') == ["message", "weather", "web_fetch"]


async def test_patterns_matching_no_tool_are_reported(make_kernel) -> None:
    from clawbot.agent.policy import unknown_patterns

    kernel = await make_kernel(
        plugins={"t": PLUGIN},
        config='[tools]\ndeny = ["exce", "group:web", "group:nosuch"]\n\n[[agents.list]]\nid = "main"\ntools = { allow = ["read", "raed"] }\n',
    )
    assert unknown_patterns(kernel.tools, kernel.config) == [
        "tools.deny[0]: 'exce' matches no installed tool",
        "tools.deny[2]: 'group:nosuch' matches no installed tool",
        "agents.list[0].tools.allow[1]: 'raed' matches no installed tool",
    ]


async def test_a_denied_tool_is_absent_from_the_request_and_cannot_be_called(make_kernel) -> None:
    provider = ScriptedProvider([call("exec", "c1")], "ok")
    kernel = await make_kernel(plugins={"t": PLUGIN}, config='[tools]\nallow = ["read", "write", "exec"]\ndeny = ["exec"]\n')
    await Conversation(kernel, ModelChoice(provider, "m"), "main", services=None).send("agent:main:main", "run ls")
    assert sorted(t.name for t in provider.requests[0].tools) == ["read", "write"]
    refused = provider.requests[1].messages[2]
    assert refused.is_error and "Unknown tool 'exec'" in refused.text and "read, write" in refused.text


async def test_the_real_sdk_request_carries_only_the_allowed_tools(make_kernel, fake_llm) -> None:
    from clawbot_openai.config import OpenAIConfig
    from clawbot_openai.provider import OpenAIProvider

    fake_llm.reply("nothing to do")
    kernel = await make_kernel(plugins={"t": PLUGIN}, config='[tools]\nprofile = "coding"\ndeny = ["group:runtime"]\n')
    provider = OpenAIProvider(OpenAIConfig(api_key="sk-test", base_url="http://fake-llm.test/v1"), env={}, http_client=fake_llm.http_client())
    await Conversation(kernel, ModelChoice(provider, "gpt-test"), "main", services=None).send("agent:main:main", "hi")
    assert sorted(fake_llm.requests[0].tools) == ["read", "session_status", "sessions_send", "write"]
    await provider.aclose()
