"""What the provider receives for a `coder` agent, in full.

The real Anthropic provider (official SDK) talks to the fake LLM; the message arrives
through the real gateway from a channel named feishu, from 张三.
"""

from __future__ import annotations

import asyncio
import json
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import clawbot_tools.plugin
import clawbot_workspace.plugin
from clawbot import BootstrapFile, PromptSection, hookimpl
from clawbot.agent.models import ModelChoice
from clawbot.agent.runtime import AgentRuntime
from clawbot.agent.system_prompt import IDENTITY_LINE
from clawbot.gateway.runner import Gateway
from clawbot.testing import FakeChannel

from .e2etools import make_provider

SKILL = (
    "---\nname: create-python-script\ndescription: 创建符合项目规范的 Python 脚本\n---\n"
    "# create-python-script\n当用户请求创建 Python 脚本时使用本 Skill。\n\n## 步骤\n1. 用 `ls` 查看当前目录结构。\n"
)
SIX = ["read", "write", "edit", "ls", "exec", "message"]
ASK = "帮我写一个 Python 脚本,功能是遍历当前目录所有文件"


def _config(workspace: Path, extra: str = "") -> str:
    return (
        f'[agents.defaults]\ntimezone = "Asia/Shanghai"\n{extra}\n'
        f'[[agents.list]]\nid = "coder"\nname = "代码助手"\ndefault = true\nworkspace = "{workspace}"\n'
        f'tools = {{ allow = {json.dumps(SIX)} }}\nskills = {{ allow = ["create-python-script"] }}\n'
    )


def _workspace(root: Path) -> Path:
    ws = root / "coder"
    (ws / "skills" / "create-python-script").mkdir(parents=True)
    (ws / "skills" / "create-python-script" / "SKILL.md").write_text(SKILL, encoding="utf-8")
    (ws / "skills" / "other-skill").mkdir()
    (ws / "skills" / "other-skill" / "SKILL.md").write_text("---\nname: other-skill\ndescription: not allowed\n---\n")
    (ws / "AGENTS.md").write_text("# AGENTS\nWork carefully.\n", encoding="utf-8")
    (ws / "SOUL.md").write_text("# SOUL\nCalm and precise.\n", encoding="utf-8")
    (ws / "TOOLS.md").write_text("# TOOLS\nPrefer ls before write.\n", encoding="utf-8")
    return ws


async def _coder(make_kernel, fake_llm, tmp_path: Path, *, extra: str = "", plugins: dict | None = None):
    ws = _workspace(tmp_path)
    channel = FakeChannel("feishu")
    kernel = await make_kernel(
        plugins={"tools": clawbot_tools.plugin, "workspace": clawbot_workspace.plugin, "feishu": channel.as_plugin(), **(plugins or {})},
        config=_config(ws, extra),
    )
    provider = make_provider("anthropic", fake_llm)
    runtime = AgentRuntime(kernel)
    conversation = await runtime.conversation("coder", chain=[ModelChoice(provider, "claude-sonnet-4-6")])
    return ws, channel, kernel, provider, runtime, conversation


def _system_text(request) -> str:  # noqa: ANN001
    return "".join(block["text"] for block in request.system)


async def test_the_coder_request_has_six_tools_skills_workspace_boundary_and_metadata(make_kernel, fake_llm, tmp_path) -> None:
    fake_llm.reply("好的")
    fake_llm.reply("再见")
    ws, channel, kernel, provider, runtime, _ = await _coder(make_kernel, fake_llm, tmp_path)
    gateway = Gateway(kernel, runtime.respond, "coder", runtime=runtime)
    task = asyncio.create_task(gateway.run([channel]))
    sent_at = datetime(2026, 6, 15, 14, 31, tzinfo=UTC)
    await channel.inject(ASK, peer_id="oc_7654321098765432109876543210", sender_id="ou_881e", sender_name="张三", timestamp=sent_at)
    await channel.inject(
        "谢谢", peer_id="oc_7654321098765432109876543210", sender_id="ou_881e", sender_name="张三", timestamp=sent_at + timedelta(hours=3, minutes=7)
    )
    gateway.stop()
    await task
    first, second = fake_llm.requests

    assert first.tools == SIX  # exactly the allowed six, in the policy's order
    stable, volatile = first.system
    assert stable["cache_control"] == {"type": "ephemeral"} and "cache_control" not in volatile  # the cache boundary
    system = _system_text(first)
    assert system.startswith(IDENTITY_LINE + "\n\n## Tooling")
    tooling = system.split("## Tooling", 1)[1].split("\n## ", 1)[0]
    assert re.findall(r"^- (\w+):", tooling, re.MULTILINE) == SIX
    assert (
        "<available_skills>\n<skill><name>create-python-script</name><description>创建符合项目规范的 Python 脚本</description>"
        "<location>./skills/create-python-script/SKILL.md</location></skill>\n</available_skills>"
    ) in system and "other-skill" not in system
    assert f"Your working directory is: {ws}" in system
    assert "Time zone: Asia/Shanghai" in system
    today = datetime.now(UTC)
    for clock in {f"{today:%Y-%m-%d}", f"{today:%H:%M}", "2026-06-15", "14:31"}:
        assert clock not in system, clock  # no clock, no message time in the system prompt
    assert "## SOUL.md" in system and "Calm and precise." in system and "persona" in system.lower()
    assert "## Runtime" in volatile["text"] and "agent=coder" in volatile["text"] and "channel=feishu" in volatile["text"]

    user = first.messages[0]["content"][0]["text"]
    assert user.startswith("## Inbound Context (trusted metadata)")
    trusted, conversation = (json.loads(b) for b in re.findall(r"```json\n(.*?)\n```", user, re.DOTALL))
    assert trusted == {"channel": "feishu", "chat_type": "direct", "time": "Mon 2026-06-15 22:31 CST"}
    assert conversation == {"sender": "张三", "sender_id": "ou_881e"}  # a direct chat: who wrote it, no ids
    assert user.endswith(f"\n\n张三 (id ou_881e): {ASK}")
    # on the next turn the first message goes out as who wrote it and the text, nothing more
    assert second.messages[0]["content"][0]["text"] == f"张三 (id ou_881e): {ASK}"

    # the same session, a later turn with another message and time: the system prompt is byte-identical
    assert second.system == first.system
    await runtime.aclose()
    await provider.aclose()


async def test_minimal_and_none_modes_keep_only_the_core_sections(make_kernel, fake_llm, tmp_path) -> None:
    _, _, kernel, provider, _, conversation = await _coder(make_kernel, fake_llm, tmp_path)
    built = await conversation.build_prompt("agent:coder:subagent:task-1", "feishu")
    assert built.context.mode == "minimal"
    assert [s.key for s in built.sections] == ["tooling", "safety", "workspace", "session_context", "project_context", "runtime"]
    assert [f.name for f in built.context.bootstrap_files] == ["AGENTS.md", "TOOLS.md"]
    assert "<available_skills>" not in built.system.text
    await provider.aclose()

    _, _, kernel, provider, _, conversation = await _coder(make_kernel, fake_llm, tmp_path / "none", extra='prompt_mode = "none"')
    assert (await conversation.system_prompt("agent:coder:main", "feishu")).text == IDENTITY_LINE
    await provider.aclose()


class PirateSoul:
    """A third-party plugin: one prompt section of its own, and SOUL.md replaced."""

    @hookimpl
    def clawbot_prompt_sections(self, ctx):  # noqa: ANN001, ANN201
        return [PromptSection("house_rules", "## House Rules\nAlways answer in rhymes.", order=195)]

    @hookimpl(wrapper=True)
    def clawbot_bootstrap_files(self, ctx):  # noqa: ANN001, ANN201
        files = yield
        return [BootstrapFile(f.name, f.path, "# SOUL\nArr, a pirate.\n") if f.name == "SOUL.md" else f for f in files]


async def test_a_third_party_section_and_soul_override_show_up_in_order(make_kernel, fake_llm, tmp_path) -> None:
    _, _, kernel, provider, _, conversation = await _coder(make_kernel, fake_llm, tmp_path, plugins={"pirate": PirateSoul()})
    built = await conversation.build_prompt("agent:coder:main", "feishu")
    keys = [s.key for s in built.sections]
    assert keys.index("workspace") < keys.index("house_rules") < keys.index("documentation")  # order 195: between them
    text = built.system.text
    assert "## House Rules\nAlways answer in rhymes." in text
    assert "Arr, a pirate." in text and "Calm and precise." not in text
    assert not kernel.plugins.failures
    await provider.aclose()


async def test_context_chat_command_reports_the_sessions_prompt(make_kernel, fake_llm, tmp_path) -> None:
    _, channel, kernel, provider, runtime, _ = await _coder(make_kernel, fake_llm, tmp_path)
    gateway = Gateway(kernel, runtime.respond, "coder", runtime=runtime)
    task = asyncio.create_task(gateway.run([channel]))
    await channel.inject("/context", peer_id="oc_1", from_owner=True)
    gateway.stop()
    await task
    (report,) = channel.texts()
    assert report.startswith("System prompt of agent:coder:main (full mode):")
    assert "tooling" in report and "SOUL.md" in report and "create-python-script" in report and "Tools: 6" in report
    assert fake_llm.requests == []  # answered by the gateway, not the model
    await runtime.aclose()
    await provider.aclose()
