"""A long conversation as the whole product handles it: facts said early are stored by the
silent memory flush before the history is compacted, and found again through memory_search.

Every part is the real one, loaded from its entry point: the Anthropic provider (official
SDK) on the fake LLM server, the core tools, the sqlite memory, the summary compaction
strategy. The window is capped at 16,000 tokens (``agents.defaults.context_tokens``), so a
dozen long messages fill it. The scripted model behaves as a model would: it stores the facts
it can see when the flush asks, writes a summary that names none of them, and searches its
memory when asked about one.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from clawbot.agent.models import ModelChoice
from clawbot.agent.runtime import AgentRuntime
from clawbot.testing.fake_llm.script import rough_tokens

from .e2etools import KEY

WINDOW = 16_000
RESERVE = 4_000
FACTS = {
    "staging database host": "db-7.internal",
    "deploy region": "ap-southeast-1",
    "on-call phone": "+41 44 555 0199",
}
FILLER = "Here is more of the design discussion we keep going back and forth on, point by point. " * 110  # ~2,500 tokens
SUMMARY = "The user and the assistant discussed a design at length. Nothing else happened."


def _texts(body: dict) -> str:
    return json.dumps(body, ensure_ascii=False)


def _last(body: dict) -> tuple[str, bool]:
    """The last message's text, and whether it carries a tool result."""
    content = body["messages"][-1]["content"]
    if isinstance(content, str):
        return content, False
    results = [b for b in content if b.get("type") == "tool_result"]
    text = "".join(b.get("text", "") for b in content if b.get("type") == "text")
    return text + "".join(json.dumps(r.get("content"), ensure_ascii=False) for r in results), bool(results)


class Model:
    """Answers each request as the scenario needs; records what kind each one was."""

    def __init__(self, flush_prompt_start: str) -> None:
        self.flush_prompt_start = flush_prompt_start
        self.kinds: list[str] = []
        self.summarised = ""  # what the summary call was given

    def __call__(self, request: Any) -> dict:
        body = request.body
        everything = _texts(body)
        last, is_result = _last(body)
        if not body.get("tools"):  # compaction's summary call: one request, no tools
            self.kinds.append("summary")
            self.summarised = everything
            return {"text": SUMMARY}
        recent = _texts({"m": body["messages"][-3:]})
        if self.flush_prompt_start in recent:
            self.kinds.append("flush")
            if is_result:
                return {"text": "NO_REPLY"}
            path = re.search(r"memory/\d{4}-\d{2}-\d{2}\.md", recent).group(0)
            notes = "".join(f"- {what}: {value}\n" for what, value in FACTS.items() if value in everything)
            return {"tool_calls": [{"name": "write", "arguments": {"path": path, "content": f"# Notes\n\n{notes}"}}]}
        if is_result:
            self.kinds.append("answer")
            host = re.search(r"db-\d+\.internal", last)
            return {"text": f"The staging database runs on {host.group(0)}." if host else "I could not find it."}
        if last.rstrip().endswith("?"):
            self.kinds.append("search")
            return {"tool_calls": [{"name": "memory_search", "arguments": {"query": "staging database host"}}]}
        self.kinds.append("turn")
        return {"text": "Noted."}


async def test_facts_said_early_survive_compaction_through_the_flush_and_memory_search(make_kernel, fake_llm_server, tmp_path: Path) -> None:
    fake = fake_llm_server
    workspace = tmp_path / "workspace"
    config = (
        f'[agents.defaults]\nworkspace = "{workspace.as_posix()}"\ncontext_tokens = {WINDOW}\n'
        '[agents.defaults.model]\nprimary = "anthropic/claude-test"\n'
        f"[agents.defaults.compaction]\nreserve_tokens_floor = {RESERVE}\nkeep_recent_tokens = 2000\n"
        "[agents.defaults.compaction.memory_flush]\nsoft_threshold_tokens = 2000\n"
        f'[providers.anthropic]\nbase_url = "{fake.base_url}"\napi_key = "sk-test"\n'
        '[plugins.memory]\nembedder = "none"\n'
    )
    kernel = await make_kernel(config=config, load_entrypoints=True)
    try:
        flush = kernel.config.agents.defaults.compaction.memory_flush
        model = Model(flush.prompt.split("memory/")[0])
        fake.queue(*([model] * 80))
        runtime = AgentRuntime(kernel)
        provider = kernel.llm_providers.get("anthropic")
        conversation = await runtime.conversation("main", chain=[ModelChoice(provider, "claude-test", context_tokens=WINDOW)])

        for what, value in FACTS.items():
            assert (await conversation.send(KEY, f"Please remember: the {what} is {value}.")).text == "Noted."
        turns = 0
        while "summary" not in model.kinds:
            turns += 1
            assert turns <= 12, f"no compaction after {turns} long messages: {model.kinds}"
            result = await conversation.send(KEY, f"Part {turns}. {FILLER}")
            assert result.text == "Noted.", result.text  # the flush and the compaction show the user nothing but a notice

        # The flush came first and stored every fact; the summary names none of them.
        assert model.kinds.index("flush") < model.kinds.index("summary")
        notes = "\n".join(p.read_text() for p in (workspace / "memory").glob("*.md"))
        assert all(value in notes for value in FACTS.values()), notes
        session_file = kernel.sessions.path_of(kernel.sessions.get(KEY), "main")
        entries = [json.loads(line) for line in session_file.read_text().splitlines()]
        kinds = [e.get("kind") or e["type"] for e in entries if e["type"] in ("compaction", "custom")]
        assert kinds.index("memory_flush") < kinds.index("compaction")
        compaction = next(e for e in entries if e["type"] == "compaction")
        assert compaction["summary"].startswith(SUMMARY) and compaction["method"] == "summary"

        # The flush happened beside the conversation: nothing of it is in what was summarised.
        assert model.summarised and model.flush_prompt_start not in model.summarised and "NO_REPLY" not in model.summarised

        # Every request after the compaction fits the window.
        start = model.kinds.index("summary")
        after = fake.requests[start + 1 :]
        assert after and all(rough_tokens(r.body) <= WINDOW for r in after), [rough_tokens(r.body) for r in after]

        # Asked later, the model finds the fact through memory_search, in the file the flush wrote.
        fake.requests.clear()
        answer = await conversation.send(KEY, "Which host runs the staging database?")
        assert answer.text == "The staging database runs on db-7.internal."
        searched = _last(fake.requests[-1].body)[0]
        assert re.search(r"memory/\d{4}-\d{2}-\d{2}\.md", searched) and "db-7.internal" in searched
    finally:
        await kernel.aclose()
