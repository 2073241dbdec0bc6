"""Compaction within limits: a small window is not compacted on every request, one turn does
not compact again and again, the flush runs before a compaction inside a turn, the message
that asked for the turn stays, and a summary that saves nothing is not stored.

The real OpenAI provider on the fake LLM server, real transcripts, the e2e test tools (their
``read`` reads real files of the workspace).
"""

from __future__ import annotations

import json
from pathlib import Path

from clawbot.agent.compaction import NOT_SHORTER, compact_session
from clawbot.testing import plugin_from_hooks
from clawbot.testing.fake_llm import ToolCallSpec
from clawbot_memory.flush import flush_before_compaction

from ..plugins_for_tests import AskTheModel
from .e2etools import KEY, start, transcript_lines, transcript_path

LOG = "step 0042 compiled module_7 in 0.315 s, all checks passed; " * 400  # ~6,000 tokens


def _plugins(strategy) -> dict[str, object]:  # noqa: ANN001
    return {"compaction": plugin_from_hooks(clawbot_compaction_strategies=lambda ctx: [strategy])}


def _summary_calls(fake) -> int:  # noqa: ANN001
    return sum(1 for r in fake.requests if not r.tools)


def _entries(kernel, kind: str) -> list[dict]:  # noqa: ANN001
    return [e for e in transcript_lines(transcript_path(kernel))[1:] if e["type"] == kind or e.get("kind") == kind]


class Scripted:
    """The model: summary calls (no tools offered) get a summary, the others the next step."""

    def __init__(self, *steps: dict) -> None:
        self.steps = list(steps)

    def __call__(self, request) -> dict:  # noqa: ANN001
        if not request.body.get("tools"):
            return {"text": "Summary: logs were read."}
        return self.steps.pop(0)


async def test_a_small_window_with_the_default_reserve_is_not_compacted_on_every_request(make_kernel, fake_llm, workspace: Path) -> None:
    # a local model with 16,000 tokens: the default reserve of 20,000 is larger than the window
    from clawbot.agent.runtime import AgentRuntime

    config = 'context_tokens = 16000\n[agents.defaults.model]\nprimary = "openai/gpt-test"\n'
    kernel, _, _ = await start(make_kernel, "openai-chat", fake_llm, workspace, config=config, plugins=_plugins(AskTheModel()))
    conversation = await AgentRuntime(kernel).conversation("main")  # the chain as configured
    fake_llm.queue(*([Scripted(*({"text": f"answer {n}"} for n in range(1, 5)))] * 4))
    for number in range(1, 5):
        assert (await conversation.send(KEY, f"short question {number}")).text == f"answer {number}"
    assert _summary_calls(fake_llm) == 0 and _entries(kernel, "compaction") == []


async def test_a_compaction_that_cannot_bring_the_request_under_the_limit_is_not_repeated_in_the_turn(make_kernel, fake_llm, workspace: Path) -> None:
    # The strategy keeps the six newest messages, three large tool results: what it would leave
    # is still over the limit and no shorter, so nothing is stored and it is not asked again.
    for name in ("a", "b", "c"):
        (workspace / f"{name}.log").write_text(LOG)
    config = "context_tokens = 16000\n[agents.defaults.compaction]\nreserve_tokens_floor = 4000\n[agents.defaults.compaction.memory_flush]\nenabled = false\n"
    kernel, conversation, _ = await start(make_kernel, "openai-chat", fake_llm, workspace, config=config, plugins=_plugins(AskTheModel(keep=6)))
    model = Scripted(*({"tool_calls": [{"name": "read", "arguments": {"path": f"{n}.log"}}]} for n in "abc"), {"text": "Read them all."})
    fake_llm.queue(*([model] * 12))
    assert (await conversation.send(KEY, "read the logs")).text == "Read them all."
    assert _summary_calls(fake_llm) <= 1, [bool(r.tools) for r in fake_llm.requests]
    assert _entries(kernel, "compaction") == []  # its summary was no shorter than what it replaced


async def test_the_flush_runs_before_a_compaction_the_turns_tool_results_bring(make_kernel, fake_llm, workspace: Path) -> None:
    # Each result is cut to 30% of the window (4,800 tokens): the second crosses the flush
    # threshold (12,000 - 4,000), the third the compaction limit (12,000).
    strategy = AskTheModel()
    (workspace / "a.log").write_text("The release is on 2026-12-04. " + LOG)
    for name in ("b", "c"):
        (workspace / f"{name}.log").write_text(LOG)
    config = "context_tokens = 16000\n[agents.defaults.compaction]\nreserve_tokens_floor = 4000\n"
    plugins = {**_plugins(strategy), "memory": plugin_from_hooks(clawbot_compaction_near=flush_before_compaction)}
    kernel, conversation, _ = await start(make_kernel, "openai-chat", fake_llm, workspace, config=config, plugins=plugins)
    fake_llm.reply(tool_calls=[ToolCallSpec("read", {"path": "a.log"})])
    fake_llm.reply(tool_calls=[ToolCallSpec("read", {"path": "b.log"})])
    # the flush turn: it stores the date, and says nothing
    fake_llm.reply(tool_calls=[ToolCallSpec("write", {"path": "memory/notes.md", "content": "release: 2026-12-04"})])
    fake_llm.reply("NO_REPLY")
    fake_llm.reply(tool_calls=[ToolCallSpec("read", {"path": "c.log"})])
    fake_llm.reply("Three logs were read.")  # the summary
    fake_llm.reply("The release is on 2026-12-04.")
    result = await conversation.send(KEY, "when is the release? read the logs")

    assert result.text == "The release is on 2026-12-04."
    assert (workspace / "memory" / "notes.md").read_text() == "release: 2026-12-04"
    kinds = [e.get("kind") or e["type"] for e in transcript_lines(transcript_path(kernel))[1:] if e["type"] in ("custom", "compaction")]
    assert kinds == ["memory_flush", "compaction"], kinds
    flush_request = fake_llm.requests[2]
    assert "release is on 2026-12-04" in json.dumps(flush_request.messages)  # the flush read what was later summarised
    # the turn went on from its own messages: the read of c.log follows the result of b.log
    after = json.dumps(fake_llm.requests[4].messages)
    assert "NO_REPLY" not in after and "Write lasting notes" not in after and fake_llm.requests[4].messages[-1]["role"] == "tool"


async def test_the_message_that_asked_for_the_turn_survives_a_compaction_inside_it(make_kernel, fake_llm, workspace: Path) -> None:
    strategy = AskTheModel()  # keeps only the newest message
    for name in ("a", "b", "c"):
        (workspace / f"{name}.log").write_text(LOG)
    config = "context_tokens = 16000\n[agents.defaults.compaction]\nreserve_tokens_floor = 4000\n[agents.defaults.compaction.memory_flush]\nenabled = false\n"
    kernel, conversation, _ = await start(make_kernel, "openai-chat", fake_llm, workspace, config=config, plugins=_plugins(strategy))
    for name in ("a", "b", "c"):
        fake_llm.reply(tool_calls=[ToolCallSpec("read", {"path": f"{name}.log"})])
    fake_llm.reply("Three logs were read.")  # the summary
    fake_llm.reply("Done.")
    asked = "compare the three logs and tell me which build was slower"
    assert (await conversation.send(KEY, asked)).text == "Done."

    [entry] = _entries(kernel, "compaction")
    assert entry["kept"][0]["content"][0]["text"] == asked
    last = json.dumps(fake_llm.requests[-1].messages)
    assert asked in last and "Three logs were read." in last


async def test_a_summary_no_shorter_than_the_conversation_is_not_stored(make_kernel, fake_llm, workspace: Path) -> None:
    strategy = AskTheModel()
    kernel, conversation, _ = await start(make_kernel, "openai-chat", fake_llm, workspace, plugins=_plugins(strategy))
    fake_llm.reply("ok")
    await conversation.send(KEY, "hi")
    fake_llm.reply("The user greeted the assistant, who answered briefly and politely, nothing else yet.")
    assert await compact_session(conversation, KEY) == NOT_SHORTER
    assert _entries(kernel, "compaction") == []


class SummariseEverything:
    """A strategy whose kept part is empty: ``first_kept_index == len(messages)``."""

    name = "everything"

    async def compact(self, request):  # noqa: ANN001, ANN201
        from clawbot import CompactionResult

        return CompactionResult("All of it: the user asked about logs.", len(request.messages), 5000, 10)


async def test_a_strategy_that_keeps_nothing_never_loses_the_turns_request_nor_crashes(make_kernel, fake_llm, workspace: Path) -> None:
    from clawbot import CompactionStrategy

    strategy = type("Everything", (SummariseEverything, CompactionStrategy), {})()
    kernel, conversation, _ = await start(make_kernel, "openai-chat", fake_llm, workspace, plugins=_plugins(strategy))
    fake_llm.reply("noted")
    await conversation.send(KEY, "first: " + LOG)
    # between turns there is no request of the user's to keep: nothing is compacted
    assert "could not be compacted" in await compact_session(conversation, KEY)
    # within a turn, the message that asked stays when the provider says the history is too long
    fake_llm.fail("context_length")
    fake_llm.reply("Still here.")
    assert (await conversation.send(KEY, "and now?")).text == "Still here."
    [entry] = _entries(kernel, "compaction")
    assert [m["content"][0]["text"] for m in entry["kept"]] == ["and now?"]


async def test_a_window_the_system_prompt_fills_is_not_compacted_turn_after_turn(make_kernel, fake_llm, workspace: Path) -> None:
    from clawbot import PromptSection

    # ~11,000 tokens of prompt in a 16,000-token window: the conversation is not what fills it
    rules = plugin_from_hooks(clawbot_prompt_sections=lambda ctx: [PromptSection("house_rules", "Be careful. " * 3_800)])
    config = "context_tokens = 16000\n"
    kernel, conversation, _ = await start(make_kernel, "openai-chat", fake_llm, workspace, config=config, plugins={**_plugins(AskTheModel()), "rules": rules})
    for number in range(1, 5):
        fake_llm.reply(f"answer {number}")
        assert (await conversation.send(KEY, f"question {number}: " + "why? " * 200)).text == f"answer {number}"
    assert _summary_calls(fake_llm) == 0 and _entries(kernel, "compaction") == [] and _entries(kernel, "memory_flush") == []
