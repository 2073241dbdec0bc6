"""Two agents in one gateway, each bound to its own person: each answers with its own model,
workspace and transcript.

The real Anthropic provider (official SDK) talks to the fake LLM; the workspace plugin puts
each agent's AGENTS.md in its system prompt.
"""

from __future__ import annotations

import asyncio

import clawbot_workspace.plugin
from clawbot.agent.runtime import AgentRuntime
from clawbot.gateway.runner import Gateway
from clawbot.testing import FakeChannel

from .e2etools import make_provider, providers_plugin


async def test_two_agents_bound_to_two_peers_use_their_own_model_and_workspace(make_kernel, fake_llm, tmp_path) -> None:
    for agent in ("home", "work"):
        (tmp_path / agent).mkdir()
        (tmp_path / agent / "AGENTS.md").write_text(f"# AGENTS\nYou are the {agent} assistant.\n")
    config = (
        '[session]\ndm_scope = "per-peer"\n'
        f'[[agents.list]]\nid = "home"\ndefault = true\nworkspace = "{tmp_path / "home"}"\nmodel = "anthropic/claude-home"\n'
        f'[[agents.list]]\nid = "work"\nworkspace = "{tmp_path / "work"}"\nmodel = "anthropic/claude-work"\n'
        '[[bindings]]\nagent_id = "work"\nmatch = { channel = "chat", peer = { kind = "direct", id = "boss" } }\n'
        '[[bindings]]\nagent_id = "home"\nmatch = { channel = "chat", peer = { kind = "direct", id = "partner" } }\n'
    )
    channel = FakeChannel("chat")
    provider = make_provider("anthropic", fake_llm)
    plugins = {"workspace": clawbot_workspace.plugin, "chat": channel.as_plugin(), "providers": providers_plugin(provider)}
    kernel = await make_kernel(plugins=plugins, config=config)
    runtime = AgentRuntime(kernel)
    gateway = Gateway(kernel, runtime.respond, kernel.config.default_agent_id(), runtime=runtime)
    task = asyncio.create_task(gateway.run([channel]))
    fake_llm.reply("work reply")
    await channel.inject("the quarterly numbers?", peer_id="boss")
    fake_llm.reply("home reply")
    await channel.inject("dinner at eight?", peer_id="partner")
    gateway.stop()
    await task
    await runtime.aclose()

    work, home = fake_llm.requests
    assert (work.model, home.model) == ("claude-work", "claude-home")
    work_system = "".join(block["text"] for block in work.body["system"])
    home_system = "".join(block["text"] for block in home.body["system"])
    assert "You are the work assistant." in work_system and "home assistant" not in work_system
    assert "You are the home assistant." in home_system and "work assistant" not in home_system
    assert "agent=work" in work_system and "agent=home" in home_system
    assert channel.texts() == ["work reply", "home reply"]
    assert {info.key for info in kernel.sessions.list()} == {"agent:work:dm:boss", "agent:home:dm:partner"}
    await kernel.aclose()
