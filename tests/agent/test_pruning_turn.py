"""Pruning in real turns: the Anthropic provider (its SDK) on the fake LLM server, real
session files, a clock the test moves. What is asserted is what the server received."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from clawbot import Tool, ToolResult
from clawbot.agent.conversation import Conversation
from clawbot.agent.models import ModelChoice
from clawbot.testing import plugin_from_hooks
from clawbot.testing.fake_llm import IN_PROCESS_URL, ToolCallSpec

from .test_pruning import PLACEHOLDER, Clock, body

KEY = "agent:main:main"
# A 200,000-token window is 800,000 characters: soft trimming above 40,000 characters of
# context, hard clearing above 64,000; a trimmed result keeps 10,000 + 10,000 characters.
PRUNING = """
[agents.defaults.context_pruning]
soft_trim_ratio = 0.05
hard_clear_ratio = 0.08
min_prunable_tool_chars = 20000

[agents.defaults.context_pruning.soft_trim]
max_chars = 25000
head_chars = 10000
tail_chars = 10000
"""
SIZE = 30_000


def _dump_plugin() -> object:
    async def dump(call):
        return ToolResult.text(body(call.arguments["n"], SIZE))

    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    return plugin_from_hooks(clawbot_tools=lambda ctx: [Tool("dump", "Print a long log.", schema, dump, concurrent=True)])


async def _conversation(make_kernel, fake_llm, workspace: Path, clock: Clock, pruning: str = PRUNING) -> tuple[object, Conversation]:
    from clawbot_anthropic.config import AnthropicConfig
    from clawbot_anthropic.provider import AnthropicProvider

    provider = AnthropicProvider(AnthropicConfig(api_key="sk-test", base_url=IN_PROCESS_URL), http_client=fake_llm.http_client())
    kernel = await make_kernel(
        plugins={"llm": plugin_from_hooks(clawbot_llm_providers=lambda ctx: [provider]), "tools": _dump_plugin()},
        config=f'[agents.defaults]\nworkspace = "{workspace.as_posix()}"\n{pruning}',
    )
    return kernel, Conversation(kernel, ModelChoice(provider, "claude-test"), "main", services=None, clock=lambda: datetime.fromtimestamp(clock(), UTC))


def _results(request) -> dict[str, str]:
    """The tool results an Anthropic request carries, by call id."""
    found = {}
    for message in request.body["messages"]:
        for block in message["content"] if isinstance(message["content"], list) else ():
            if block["type"] == "tool_result":
                content = block["content"]
                found[block["tool_use_id"]] = content if isinstance(content, str) else "".join(c["text"] for c in content)
    return found


def _trimmed(n: int) -> str:
    text = body(n, SIZE)
    return text[:10_000] + "\n... [10,000 of 30,000 characters of this old tool result cut] ...\n" + text[-10_000:]


async def test_after_the_cache_expired_the_request_is_pruned_and_the_transcript_is_not(make_kernel, fake_llm, workspace) -> None:
    clock = Clock()
    kernel, conversation = await _conversation(make_kernel, fake_llm, workspace, clock)
    for n in (1, 2, 3):
        fake_llm.reply(tool_calls=[ToolCallSpec("dump", {"n": n}, id=f"toolu_c{n}")])
        fake_llm.reply(f"log {n} read")
        await conversation.send(KEY, f"show log {n}")
        clock.now += 30
    whole = {f"toolu_c{n}": body(n, SIZE) for n in (1, 2, 3)}

    clock.now += 240  # within the 300 s of the cache: nothing pruned
    await conversation.send(KEY, "still there?")
    within = fake_llm.requests[-1]
    assert _results(within) == whole

    transcript = kernel.sessions.path_of(kernel.sessions.get(KEY), "main")
    before = transcript.read_bytes()
    clock.now += 301  # the cache has expired
    await conversation.send(KEY, "what did the first log say?")
    pruned = fake_llm.requests[-1]
    # c3 answers one of the newest three assistant messages; c2 is trimmed; c1, the oldest,
    # is cleared because the trimmed context is still above the hard-clear share
    assert _results(pruned) == {"toolu_c1": PLACEHOLDER, "toolu_c2": _trimmed(2), "toolu_c3": body(3, SIZE)}
    shrunk = len(json.dumps(within.body)) - len(json.dumps(pruned.body))
    assert SIZE + 10_000 - 400 < shrunk < SIZE + 10_000  # 30,000 + 10,000 characters fewer, give or take the new turn

    clock.now += 60  # the same cache period: the same prefix, byte for byte
    await conversation.send(KEY, "and the second?")
    later = fake_llm.requests[-1]
    assert later.body["messages"][: len(pruned.body["messages"])] == pruned.body["messages"]
    assert later.body["system"] == pruned.body["system"]

    after = transcript.read_bytes()
    assert after[: len(before)] == before  # what was written is untouched ...
    assert PLACEHOLDER.encode() not in after and b"characters of this old tool result cut" not in after  # ... and nothing pruned is added
    history = kernel.sessions.open(KEY).loaded.messages()
    assert {m.tool_call_id: m.text for m in history if m.tool_call_id} == whole


async def test_mode_off_sends_everything_after_the_cache_expired(make_kernel, fake_llm, workspace) -> None:
    clock = Clock()
    off = PRUNING.replace("min_prunable_tool_chars", 'mode = "off"\nmin_prunable_tool_chars')
    kernel, conversation = await _conversation(make_kernel, fake_llm, workspace, clock, off)
    for n in (1, 2, 3):
        fake_llm.reply(tool_calls=[ToolCallSpec("dump", {"n": n}, id=f"toolu_c{n}")])
        fake_llm.reply(f"log {n} read")
        await conversation.send(KEY, f"show log {n}")
        clock.now += 3600
    await conversation.send(KEY, "what did the first log say?")
    assert _results(fake_llm.requests[-1]) == {f"toolu_c{n}": body(n, SIZE) for n in (1, 2, 3)}
    assert [p.name for p in kernel.sessions.path_of(kernel.sessions.get(KEY), "main").parent.glob("*.pruning.json")] == []
