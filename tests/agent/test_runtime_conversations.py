"""The runtime builds each agent's conversation and hands it the services its tools use.

Nothing points back at its owner: a conversation gets the runtime's shared services when it
is built, never the runtime; an embedding without services has to say so.
"""

from __future__ import annotations

import gc

import pytest
from clawbot import Tool, ToolCall, ToolResult
from clawbot.agent.conversation import Conversation
from clawbot.agent.models import ModelChoice
from clawbot.agent.runtime import AgentRuntime
from clawbot.testing import plugin_from_hooks

from .scripted import ScriptedProvider, call


def _probe(seen: list) -> object:
    def handler(call: ToolCall) -> ToolResult:
        seen.append(call.services)
        return ToolResult.text("ok")

    return plugin_from_hooks(clawbot_tools=lambda ctx: [Tool("probe", "records its services", {"type": "object"}, handler)])


async def test_the_runtime_builds_conversations_with_its_services_and_no_way_back(make_kernel) -> None:
    seen: list = []
    kernel = await make_kernel(plugins={"probe": _probe(seen)})
    runtime = AgentRuntime(kernel)
    provider = ScriptedProvider([call("probe", "c1")], "done")
    conversation = await runtime.conversation("main", chain=[ModelChoice(provider, "m")])
    assert await runtime.conversation("main") is conversation  # one per agent, built once
    assert conversation.services is runtime.services
    assert not any(referent is runtime for referent in gc.get_referents(conversation, *gc.get_referents(conversation)))
    await conversation.send("agent:main:main", "go")
    assert seen[0].shared is runtime.services and seen[0].session_key == "agent:main:main"
    await runtime.aclose()
    await kernel.aclose()


async def test_a_bare_conversation_says_it_has_no_services(make_kernel) -> None:
    seen: list = []
    kernel = await make_kernel(plugins={"probe": _probe(seen)})
    choice = ModelChoice(ScriptedProvider([call("probe", "c1")], "done"), "m")
    with pytest.raises(TypeError, match="services"):
        Conversation(kernel, choice, "main")  # type: ignore[call-arg]  # leaving them out is not an option
    await Conversation(kernel, choice, "main", services=None).send("agent:main:main", "go")
    assert seen == [None]
    await kernel.aclose()
