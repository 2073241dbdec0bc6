"""The shipped memory plugin in a real turn: ``clawbot agent -m`` on the fake LLM, whose
``/v1/embeddings`` gives the vectors, so the model's ``memory_search`` runs the hybrid
search end to end (index built on first use, FTS5 and sqlite-vec) and ``memory_get`` reads
the lines it found. What the model receives is read off the requests the fake recorded."""

from __future__ import annotations

import json
from pathlib import Path

from clawbot.testing.cli import invoke_cli
from clawbot.testing.fake_llm import ToolCallSpec

LONG_TERM = """# Long-term memory

## Decisions
- 2026-01-15: chose PostgreSQL as the database, for its JSON columns.
- 2026-01-20: REST instead of GraphQL.
"""
DAY = """# 2026-01-26

## 16:00 Preferences
The user said they prefer TypeScript to JavaScript.
"""


def _home(home: Path, base_url: str) -> Path:
    workspace = home / "ws"
    (workspace / "memory").mkdir(parents=True)
    (workspace / "MEMORY.md").write_text(LONG_TERM, encoding="utf-8")
    (workspace / "memory" / "2026-01-26.md").write_text(DAY, encoding="utf-8")
    (home / "clawbot.toml").write_text(
        f'[agents.defaults]\nworkspace = "{workspace}"\n\n'
        '[agents.defaults.model]\nprimary = "openai/gpt-test"\n\n'
        f'[providers.openai]\nbase_url = "{base_url}/v1"\napi_key = "sk-test"\n\n'
        f'[plugins.memory]\nembedder = "openai-compatible"\nbase_url = "{base_url}/v1"\napi_key = "sk-embed"\nmodel = "embed-test"\n',
        encoding="utf-8",
    )
    return workspace


def _tool_results(request) -> list[dict]:  # noqa: ANN001 - RecordedRequest
    return [json.loads(m["content"]) for m in request.messages if m.get("role") == "tool"]


def test_the_model_recalls_a_decision_from_memory_through_the_shipped_index(clawbot_home: Path, fake_llm_thread) -> None:
    fake = fake_llm_thread
    _home(clawbot_home, fake.base_url)
    fake.reply(tool_calls=[ToolCallSpec("memory_search", {"query": "which database did we choose?"})])
    fake.reply(tool_calls=[ToolCallSpec("memory_get", {"path": "MEMORY.md", "from": 3, "lines": 2})])
    fake.reply("PostgreSQL, chosen on 2026-01-15.")

    run = invoke_cli("agent", "-m", "which database did we pick?", home=clawbot_home)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "PostgreSQL, chosen on 2026-01-15."
    assert "Traceback" not in run.stdout + run.stderr

    chats = [r for r in fake.requests if r.path.endswith("/chat/completions")]
    embeddings = [r for r in fake.requests if r.path.endswith("/embeddings")]
    assert len(chats) == 3 and embeddings  # chunks at indexing, then the question
    assert all(r.headers["authorization"] == "Bearer sk-embed" for r in embeddings)

    (found,) = _tool_results(chats[1])
    assert (found["mode"], found["provider"], found["model"]) == ("hybrid", "openai-compatible", "embed-test")
    top = found["results"][0]
    assert (top["path"], top["startLine"], top["source"]) == ("MEMORY.md", 1, "memory")
    assert "chose PostgreSQL as the database" in top["snippet"] and top["score"] > 0

    got = _tool_results(chats[2])[1]
    assert got["path"] == "MEMORY.md"
    assert got["text"] == "## Decisions\n- 2026-01-15: chose PostgreSQL as the database, for its JSON columns."

    index = clawbot_home / "memory" / "main.sqlite"
    assert index.exists()  # rebuilt from the Markdown whenever it is deleted
    index.unlink()
    again = invoke_cli("memory", "search", "--json", "TypeScript", home=clawbot_home)
    assert again.returncode == 0, again.stderr
    hits = json.loads(again.stdout)
    assert hits[0]["path"] == "memory/2026-01-26.md" and hits[0]["start_line"] == 1 and hits[0]["end_line"] == 4
