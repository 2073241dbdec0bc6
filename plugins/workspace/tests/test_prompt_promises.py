"""The system prompt promises only what this run can do.

Each row names a capability the prompt talks about and what makes it available (a tool in
the run, a channel feature); the prompt is built with and without it. Heartbeat polls are
explained only to an agent whose heartbeats run, and ``web_search`` is offered only with a
search provider.
"""

from __future__ import annotations

from pathlib import Path

import clawbot_tools.plugin
import clawbot_workspace.plugin
import pytest
from clawbot import LLMProvider, Message, Tool, ToolResult
from clawbot.types import PromptContext, SkillEntry
from clawbot_workspace.init import template_text
from clawbot_workspace.sections import all_sections

BASE_TOOLS = ("write", "ls")


def tool(name: str) -> Tool:
    return Tool(name=name, description=f"The {name} tool.", parameters={"type": "object"}, handler=lambda call: ToolResult.text("ok"))


def prompt(workspace: Path, *, tools: tuple[str, ...] = (), capabilities: tuple[str, ...] = (), skills: bool = False) -> str:
    skill = SkillEntry("pdf", "Read PDFs.", workspace / "skills" / "pdf" / "SKILL.md", "workspace")
    ctx = PromptContext(
        agent_id="main",
        mode="full",
        session_key="agent:main:main",
        workspace=workspace,
        tools=tuple(tool(name) for name in (*BASE_TOOLS, *tools)),
        channel="fake",
        capabilities=capabilities,
        skills=(skill,) if skills else (),
    )
    return "\n\n".join(section.text for section in all_sections(ctx))


# (what the prompt promises, text that shows the promise, what makes it true)
PROMISES = [
    ("searching the memory files", "## Memory Recall", {"tools": ("memory_search",)}),
    ("reading lines with memory_get", "`memory_get`", {"tools": ("memory_search", "memory_get")}),
    ("changing clawbot through the gateway tool", "## clawbot Self-Update", {"tools": ("gateway",)}),
    ("voice messages", "## Voice", {"tools": ("tts",)}),
    ("emoji reactions", "## Reactions", {"capabilities": ("reactions",)}),
    ("attachments by MEDIA lines", "MEDIA:<path-or-url>", {"capabilities": ("media",)}),
    ("native replies by reply tags", "[[reply_to_current]]", {"capabilities": ("replies",)}),
    ("reaching other sessions", "sessions_send", {"tools": ("sessions_send",)}),
    ("sending with the message tool", "### message tool", {"tools": ("message",)}),
    ("scheduled system events", "schedules", {"tools": ("cron",)}),
    ("exec approvals", "approval-pending", {"tools": ("exec",)}),
    ("using skills by reading them", "## Skills", {"tools": ("read",), "skills": True}),
    ("knowing the time exactly", "session_status", {"tools": ("session_status",)}),
]


@pytest.mark.parametrize(("promise", "marker", "feature"), PROMISES, ids=[p[0] for p in PROMISES])
def test_a_promise_is_made_only_with_its_feature(workspace: Path, promise: str, marker: str, feature: dict) -> None:
    assert marker in prompt(workspace, **feature), f"{promise}: not promised although available"
    without = {key: value for key, value in feature.items() if key != "tools" and key != "capabilities"}
    assert marker not in prompt(workspace, **without), f"{promise}: promised without {feature}"


def test_skills_without_the_read_tool_are_not_listed(workspace: Path) -> None:
    assert "## Skills" not in prompt(workspace, skills=True)


EVERYTHING = {
    "tools": ("read", "exec", "message", "cron", "gateway", "tts", "memory_search", "memory_get", "sessions_send", "session_status"),
    "capabilities": ("reactions",),
    "skills": True,
}


def test_heartbeat_polls_are_explained_only_when_heartbeats_run(workspace: Path) -> None:
    assert "HEARTBEAT_OK" not in prompt(workspace, **EVERYTHING)  # heartbeats off for the agent
    ctx = PromptContext(agent_id="main", mode="full", session_key="agent:main:main", workspace=workspace, heartbeat_prompt="Check in.")
    text = "\n\n".join(section.text for section in all_sections(ctx))
    assert "## Heartbeats\nHeartbeat prompt: Check in.\n" in text
    assert "reply exactly: HEARTBEAT_OK" in text
    assert "does not run heartbeats" not in template_text("HEARTBEAT.md")


@pytest.mark.parametrize(("config", "shown"), [(None, True), ("[agents.defaults.heartbeat]\nevery_minutes = 0\n", False)], ids=["on", "off"])
async def test_the_prompt_explains_heartbeats_as_configured_and_stays_byte_stable(make_kernel, config: str | None, shown: bool) -> None:
    first = await system_prompt(make_kernel, {}, config)
    assert ("## Heartbeats" in first) is shown
    assert (await system_prompt(make_kernel, {}, config)) == first


class Silent(LLMProvider):
    name = "silent"

    async def complete(self, request, on_text=None):
        return Message.assistant("")


async def system_prompt(make_kernel, env: dict[str, str], config: str | None = None) -> str:
    plugins = {"tools": clawbot_tools.plugin, "workspace": clawbot_workspace.plugin}
    kernel = await make_kernel(plugins=plugins, env=env, config=config)
    return await kernel.conversation(Silent(), model="m").system_prompt("agent:main:main", "fake")


@pytest.mark.parametrize(
    ("env", "config", "offered"),
    [
        ({}, None, False),
        ({"BRAVE_API_KEY": "a-key"}, None, True),
        ({}, '[plugins.tools]\nweb_search_provider = "searxng"\n', False),
        ({}, '[plugins.tools]\nweb_search_provider = "searxng"\nweb_search_base_url = "http://localhost:8888"\n', True),
    ],
    ids=["no-provider", "brave-key", "searxng-without-url", "searxng"],
)
async def test_web_search_is_in_the_prompt_only_with_a_search_provider(
    make_kernel, monkeypatch: pytest.MonkeyPatch, env: dict[str, str], config: str | None, offered: bool
) -> None:
    monkeypatch.delenv("BRAVE_API_KEY", raising=False)  # a developer's real key must not count
    text = await system_prompt(make_kernel, env, config)
    assert ("- web_search:" in text) is offered
    assert "- web_fetch:" in text
