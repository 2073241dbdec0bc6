"""The silent memory flush: before a session's context nears compaction, an exchange beside
the turn, which the user never sees, stores durable notes in memory/<date>.md.

Real turns: the Anthropic provider (official SDK) on the fake LLM server, the core tools'
``write`` on a real workspace, real JSONL transcripts. The window is 40,000 tokens
(``context_tokens``), the compaction line 30,000 (a reserve of 10,000) and the flush line
4,000 below it: the first message stays under it, the second crosses it.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import clawbot_tools.plugin
from clawbot import CompactionResult, CompactionStrategy
from clawbot.testing import plugin_from_hooks
from clawbot.testing.fake_llm import IN_PROCESS_URL, ToolCallSpec
from clawbot_anthropic.config import AnthropicConfig
from clawbot_anthropic.provider import AnthropicProvider
from clawbot_memory import plugin as memory_plugin

KEY = "agent:main:main"
MODEL = "claude-test"
# how clawbot labels its own system events wherever a model reads them
SYSTEM_EVENT_LABEL = "[System event from clawbot, not written by the user]"
FILLER = "The quick brown fox jumps over the lazy dog. " * 1_400  # ~63,000 chars, ~15,750 tokens
HALF = FILLER[: len(FILLER) // 2]
NOTE = "Durable notes: the locker code is 4417."
FLUSH_NOTE = "The session is close to compaction. Store durable memories now."
# 23:30 UTC on 14 March is 15 March in Tokyo: the flush names the user's date.
NOW = datetime(2025, 3, 14, 23, 30, tzinfo=UTC)
DATE = "2025-03-15"


class KeepLast(CompactionStrategy):
    """Keeps the newest message only: enough to start a new compaction cycle."""

    name = "summary"

    async def compact(self, request):
        return CompactionResult("We talked about a locker.", first_kept_index=len(request.messages) - 1, tokens_before=40_000, tokens_after=100)


def _config(workspace: Path, *, enabled: bool = True) -> str:
    return (
        f'[agents.defaults]\nworkspace = "{workspace}"\ntimezone = "Asia/Tokyo"\ncontext_tokens = 40000\n\n'
        "[agents.defaults.compaction]\nreserve_tokens_floor = 10000\n\n"
        f"[agents.defaults.compaction.memory_flush]\nenabled = {str(enabled).lower()}\nsoft_threshold_tokens = 4000\n"
    )


async def _start(make_kernel, fake_llm, workspace: Path, *, enabled: bool = True):
    provider = AnthropicProvider(AnthropicConfig(api_key="sk-test", base_url=IN_PROCESS_URL), http_client=fake_llm.http_client())
    plugins = {
        "llm": plugin_from_hooks(clawbot_llm_providers=lambda ctx: [provider]),
        "tools": clawbot_tools.plugin,
        "compaction": plugin_from_hooks(clawbot_compaction_strategies=lambda ctx: [KeepLast()]),
        "memory": plugin_from_hooks(clawbot_compaction_near=memory_plugin.clawbot_compaction_near),
    }
    kernel = await make_kernel(plugins=plugins, config=_config(workspace, enabled=enabled))
    conversation = kernel.conversation(provider, model=MODEL, clock=lambda: NOW, backoff=False)
    return kernel, conversation, provider


async def _send(conversation, text: str) -> tuple[str, list[str]]:
    streamed: list[str] = []

    async def sink(chunk: str) -> None:
        streamed.append(chunk)

    result = await conversation.send(KEY, text, on_text=sink)
    return result.text, streamed


def _entries(kernel) -> list[dict]:
    (path,) = (kernel.state_dir / "sessions" / "main").glob("*.jsonl")  # the one session's transcript
    return [json.loads(line) for line in path.read_text().splitlines()]


def _flushes(kernel) -> list[dict]:
    return [e for e in _entries(kernel) if e["type"] == "custom" and e.get("kind") == "memory_flush"]


def _body(request) -> str:
    return json.dumps(request.body, ensure_ascii=False)


async def test_the_flush_runs_once_per_cycle_writes_the_days_notes_and_the_user_sees_nothing(make_kernel, fake_llm, workspace) -> None:
    kernel, conversation, provider = await _start(make_kernel, fake_llm, workspace)
    fake_llm.reply("Noted.")
    assert await _send(conversation, "My locker code is 4417. " + FILLER) == ("Noted.", ["Noted."])
    assert _flushes(kernel) == [] and len(fake_llm.requests) == 1  # under the threshold

    # The second message crosses it: the flush runs beside the turn, then the turn goes on.
    fake_llm.reply(tool_calls=[ToolCallSpec("write", {"path": f"memory/{DATE}.md", "content": NOTE})])
    fake_llm.reply("NO_REPLY")
    fake_llm.reply("Sure.")
    assert await _send(conversation, "Here is more. " + HALF) == ("Sure.", ["Sure."])
    assert (workspace / "memory" / f"{DATE}.md").read_text() == NOTE
    flush, after_tool, user_turn = fake_llm.requests[1:]
    assert SYSTEM_EVENT_LABEL in _body(flush) and f"memory/{DATE}.md" in _body(flush) and "YYYY" not in _body(flush)
    assert FLUSH_NOTE in json.dumps(flush.system) and "Here is more." in _body(flush)  # it read the turn's message too
    assert FLUSH_NOTE not in json.dumps(user_turn.system)  # the flush instructions were for the flush only
    # nothing of the flush joined the turn: the request goes on from the user's own message
    assert "Here is more." in _body(user_turn) and SYSTEM_EVENT_LABEL not in _body(user_turn) and "NO_REPLY" not in _body(user_turn)
    assert json.dumps(user_turn.messages[-1]).count("Here is more.") == 1
    (entry,) = _flushes(kernel)
    assert entry["outcome"] == "stored" and entry["tokens"] >= entry["threshold"] >= 26_000 and entry["date"] == DATE
    assert "NO_REPLY" not in json.dumps(_entries(kernel))  # nor the transcript

    # Still over the line, but flushed in this cycle already: one request, the user's.
    fake_llm.reply("Fine.")
    assert await _send(conversation, "And?") == ("Fine.", ["Fine."])
    assert len(fake_llm.requests) == 5 and len(_flushes(kernel)) == 1

    # A compaction starts a new cycle: the next crossing flushes again.
    fake_llm.fail("context_length")
    fake_llm.reply("Compacted.")
    assert (await _send(conversation, "Overflow now."))[0] == "Compacted."
    fake_llm.reply("NO_REPLY")
    fake_llm.reply("Done.")
    assert await _send(conversation, "Again. " + FILLER + HALF) == ("Done.", ["Done."])
    whole = _flushes(kernel)
    assert len(whole) == 2 and whole[1]["outcome"] == "nothing"  # recorded though nothing was stored
    await provider.aclose()


async def test_enabled_false_turns_the_flush_off(make_kernel, fake_llm, workspace) -> None:
    kernel, conversation, provider = await _start(make_kernel, fake_llm, workspace, enabled=False)
    fake_llm.reply("Noted.")
    fake_llm.reply("Sure.")
    await _send(conversation, "My locker code is 4417. " + FILLER)
    assert await _send(conversation, "Here is more. " + HALF) == ("Sure.", ["Sure."])
    assert len(fake_llm.requests) == 2 and _flushes(kernel) == []
    assert not (workspace / "memory").exists()
    await provider.aclose()


async def test_a_failed_flush_is_recorded_and_the_user_is_still_answered(make_kernel, fake_llm, workspace, caplog) -> None:
    kernel, conversation, provider = await _start(make_kernel, fake_llm, workspace)
    fake_llm.reply("Noted.")
    await _send(conversation, "My locker code is 4417. " + FILLER)
    fake_llm.fail("server_error", times=4)  # the first try and every retry of the flush call
    fake_llm.reply("Sure.")
    assert await _send(conversation, "Here is more. " + HALF) == ("Sure.", ["Sure."])
    (entry,) = _flushes(kernel)
    assert entry["outcome"] == "failed"
    assert "memory flush" in caplog.text and "Traceback" not in caplog.text
    # Failed once in this cycle is enough: the next turn does not pay for it again.
    fake_llm.reply("Fine.")
    assert (await _send(conversation, "And?"))[0] == "Fine."
    assert len(_flushes(kernel)) == 1
    await provider.aclose()
