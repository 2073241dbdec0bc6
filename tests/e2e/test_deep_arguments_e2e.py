"""Tool arguments nested absurdly deep cost the model one error result, never the turn.

Every way a reply reaches the loop is covered: the three wire APIs through their official
SDKs, and prompt-based tool calling (``native_tools = false``) through the OpenAI SDK.
"""

from __future__ import annotations

import json

import clawbot_prompt_tools.plugin
import pytest
from clawbot import Tool, ToolResult
from clawbot.providerkit import MAX_ARGUMENT_DEPTH, TOO_DEEP
from clawbot.sessions.codec import make_data_converter
from clawbot.sessions.transcript import load_transcript
from clawbot.testing import plugin_from_hooks
from clawbot.testing.fake_llm import IN_PROCESS_URL, ToolCallSpec

from .e2etools import KEY, KINDS, providers_plugin, start, transcript_path, workspace_config

PATHS = (*KINDS, "prompt-based")
DEPTHS = (1, MAX_ARGUMENT_DEPTH, MAX_ARGUMENT_DEPTH + 1, 330, 5_000)


def nested_arguments(depth: int, container: str) -> str:
    """A JSON object whose nesting, counting the object itself, is exactly ``depth`` levels."""
    inner = '"leaf"'
    for _ in range(depth - 1):
        inner = f"[{inner}]" if container == "list" else f'{{"v": {inner}}}'
    return f'{{"v": {inner}}}' if depth > 1 else '{"v": "leaf"}'


def probe_plugin(ran: list[dict]) -> object:
    def probe(call):
        ran.append(call.arguments)
        return ToolResult.text("probe ran")

    return plugin_from_hooks(clawbot_tools=lambda ctx: [Tool("probe", "Takes any object.", {"type": "object"}, probe)])


async def start_path(path: str, make_kernel, fake_llm, workspace, ran: list[dict]):
    if path != "prompt-based":
        _, conversation, _ = await start(make_kernel, path, fake_llm, workspace, plugins={"probe": probe_plugin(ran)})
        return conversation
    from clawbot.agent.conversation import Conversation
    from clawbot.agent.models import ModelChoice
    from clawbot_openai.config import OllamaConfig
    from clawbot_openai.provider import OllamaProvider

    provider = OllamaProvider(OllamaConfig(base_url=IN_PROCESS_URL + "/v1", native_tools=False), env={}, http_client=fake_llm.http_client())
    kernel = await make_kernel(
        plugins={"llm": providers_plugin(provider), "probe": probe_plugin(ran), "prompt-tools": clawbot_prompt_tools.plugin}, config=workspace_config(workspace)
    )
    return Conversation(kernel, ModelChoice(provider, "llama3.2"), "main", services=None)


def script_call(path: str, fake_llm, arguments: str) -> None:
    if path == "prompt-based":
        fake_llm.reply(f'Checking.\n<tool_call>{{"name": "probe", "arguments": {arguments}}}</tool_call>')
    else:
        fake_llm.reply(tool_calls=[ToolCallSpec("probe", arguments)])


@pytest.mark.parametrize("container", ["list", "object"])
@pytest.mark.parametrize("depth", DEPTHS)
@pytest.mark.parametrize("path", PATHS)
async def test_arguments_nested_past_the_limit_become_an_error_result_and_the_reply_arrives(make_kernel, fake_llm, workspace, path, depth, container) -> None:
    ran: list[dict] = []
    conversation = await start_path(path, make_kernel, fake_llm, workspace, ran)
    script_call(path, fake_llm, nested_arguments(depth, container))
    fake_llm.reply("All done.")

    turn = await conversation.send(KEY, "probe it")

    assert (turn.text, turn.tool_calls) == ("All done.", 1)
    too_deep = depth > MAX_ARGUMENT_DEPTH
    assert len(ran) == (0 if too_deep else 1)
    seen_by_model = json.dumps(fake_llm.requests[1].body)
    assert (f"The arguments for probe {TOO_DEEP}" in seen_by_model) is too_deep
    assert ("probe ran" in seen_by_model) is not too_deep

    # The transcript stays writable and loadable, and the session goes on.
    loaded = load_transcript(transcript_path(conversation.kernel), make_data_converter())
    assert loaded.warnings == []
    result = next(m for m in loaded.messages() if m.role.value == "tool_result")
    assert result.is_error is too_deep
    fake_llm.reply("Still here.")
    assert (await conversation.send(KEY, "and now?")).text == "Still here."
