"""Search: hits with paths and line ranges, snippets, an embedder that fails, isolation
between agents, and searches while a sync is writing."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
import sqlean

from .memory_support import WordsEmbedder, make_provider, write


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    write(ws / "MEMORY.md", "# Preferences\nLikes oolong tea.\nAllergic to peanuts.\n")
    long_day = "## Standup\n" + "\n".join(f"Item {i}: went through the quarterly budget spreadsheet with finance." for i in range(30)) + "\n"
    write(ws / "memory" / "2024-06-10.md", "# Monday\n\n" + long_day)
    return ws


async def test_hits_carry_path_lines_score_and_a_bounded_snippet(tmp_path: Path, workspace: Path) -> None:
    provider = make_provider(tmp_path / "state", workspace, WordsEmbedder(), snippet_chars=200, chunk_tokens=200, chunk_overlap=20)
    try:
        found = await provider.search("peanuts allergy", agent_id="main", max_results=2)
        assert found.mode == "hybrid" and (found.provider, found.model) == ("words", "bag-of-words")
        assert len(found.hits) == 2
        top = found.hits[0]
        assert (top.path, top.start_line, top.end_line, top.source) == ("MEMORY.md", 1, 3, "memory")
        assert top.snippet == "# Preferences\nLikes oolong tea.\nAllergic to peanuts."
        assert 0 <= found.hits[1].score <= top.score <= 1
        budget = await provider.search("quarterly budget spreadsheet", agent_id="main", min_score=0.5)
        assert budget.hits and all(h.path == "memory/2024-06-10.md" for h in budget.hits)
        for hit in budget.hits:
            assert len(hit.snippet) <= 200 and hit.snippet.endswith("\u2026")
            assert hit.end_line - hit.start_line >= 5
        assert all(h.score >= 0.5 for h in budget.hits)
    finally:
        await provider.close()


async def test_a_query_the_embedder_fails_on_is_answered_by_keyword_and_said(tmp_path: Path, workspace: Path) -> None:
    embedder = WordsEmbedder()
    provider = make_provider(tmp_path / "state", workspace, embedder)
    try:
        await provider.sync(agent_id="main")
        embedder.fail = "connection refused by the embedding endpoint"
        found = await provider.search("oolong", agent_id="main")
        assert found.mode == "keyword" and found.provider is None
        assert found.notice == "The embedder failed (connection refused by the embedding endpoint), so this search matched words only."
        assert found.hits[0].path == "MEMORY.md"
        status = await provider.status(agent_id="main")
        assert status.last_error == "The embedder failed at a search (words bag-of-words (64 dims)): connection refused by the embedding endpoint"
        assert status.last_error in status.reasons
    finally:
        await provider.close()


async def test_a_chunk_from_the_middle_of_a_day_is_found_by_the_days_heading(tmp_path: Path) -> None:
    """A question naming the date or the topic finds the later chunks of a long section too:
    the headings above a chunk are searched with it (by words), though it does not show them."""
    ws = tmp_path / "ws"
    lines = "\n".join(f"Point {i}: walked through slide {i} with the client." for i in range(60))
    write(ws / "memory" / "2026-03-14.md", f"# 2026-03-14 (Saturday 14 March 2026)\n\n## Harbourview pitch\n{lines}\n")
    provider = make_provider(tmp_path / "state", ws, None, chunk_tokens=200, chunk_overlap=0)
    try:
        found = await provider.search("Harbourview March", agent_id="main", max_results=10)
        assert len(found.hits) >= 3 and {h.path for h in found.hits} == {"memory/2026-03-14.md"}
        assert any(h.start_line > 10 and "Harbourview" not in h.snippet for h in found.hits)
    finally:
        await provider.close()


async def test_blank_and_wordless_queries_find_nothing_without_failing(tmp_path: Path, workspace: Path) -> None:
    provider = make_provider(tmp_path / "state", workspace, None)
    try:
        assert (await provider.search("   ", agent_id="main")).hits == ()
        assert (await provider.search('"*^ AND OR NEAR(', agent_id="main")).mode == "keyword"
    finally:
        await provider.close()


async def test_one_agents_search_never_returns_anothers_files(tmp_path: Path) -> None:
    ws_a = tmp_path / "a"
    ws_b = tmp_path / "b"
    write(ws_a / "MEMORY.md", "Agent A: the wifi password is on the fridge.\n")
    write(ws_b / "MEMORY.md", "Agent B: the wifi password is in the drawer.\n")
    write(ws_b / "memory" / "b-only.md", "wifi router model XR500\n")
    provider = make_provider(tmp_path / "state", {"a": ws_a, "b": ws_b}, WordsEmbedder())
    try:
        for agent, mine, theirs in (("a", "fridge", "drawer"), ("b", "drawer", "fridge")):
            found = await provider.search("wifi password router", agent_id=agent)
            assert found.hits and any(mine in h.snippet for h in found.hits)
            assert not any(theirs in h.snippet or "XR500" in h.snippet for h in found.hits if agent == "a")
            assert not any(theirs in h.snippet for h in found.hits)
        assert sorted(p.name for p in (tmp_path / "state" / "memory").glob("*.sqlite")) == ["a.sqlite", "b.sqlite"]
        with pytest.raises(Exception, match="does not exist"):
            await provider.get("memory/b-only.md", agent_id="a")
        with pytest.raises(Exception, match="is not a memory file"):
            await provider.get(str(ws_b / "memory" / "b-only.md"), agent_id="a")
    finally:
        await provider.close()


async def test_a_search_during_a_sync_answers_from_the_last_complete_state(tmp_path: Path, workspace: Path) -> None:
    embedder = WordsEmbedder()
    provider = make_provider(tmp_path / "state", workspace, embedder)
    try:
        before = await provider.search("oolong tea", agent_id="main")
        write(workspace / "MEMORY.md", "# Preferences\nNow drinks espresso.\n")
        write(workspace / "memory" / "2024-06-11.md", "Espresso machine arrived.\n")
        (workspace / "memory" / "2024-06-10.md").unlink()
        embedder.gate = asyncio.Event()
        embedder.entered.clear()
        syncing = asyncio.create_task(provider.sync(agent_id="main", force=True))
        await asyncio.wait_for(embedder.entered.wait(), 10)  # the sync is under way
        during = await provider.search("oolong tea", agent_id="main")
        assert during.hits == before.hits  # the old state, whole
        assert not any("espresso" in h.snippet.lower() for h in (await provider.search("espresso", agent_id="main")).hits)
        embedder.gate.set()
        report = await syncing
        assert (report.files_indexed, report.files_removed) == (2, 1)
        after = await provider.search("espresso", agent_id="main", min_score=0.3)
        assert {h.path for h in after.hits} == {"MEMORY.md", "memory/2024-06-11.md"}
    finally:
        if embedder.gate is not None:
            embedder.gate.set()
        await provider.close()


async def test_a_search_while_another_connection_writes_sees_the_last_commit(tmp_path: Path, workspace: Path) -> None:
    provider = make_provider(tmp_path / "state", workspace, WordsEmbedder())
    try:
        before = await provider.search("budget spreadsheet", agent_id="main")
        assert before.hits
        # the index's own sqlite library: two sqlite libraries in one process must not share a file
        other = sqlean.connect(str(tmp_path / "state" / "memory" / "main.sqlite"), isolation_level=None)
        try:
            other.execute("begin immediate")
            other.execute("delete from chunks")  # half way through someone else's rebuild
            during = await provider.search("budget spreadsheet", agent_id="main")
            assert during.hits == before.hits
            other.execute("rollback")
        finally:
            other.close()
    finally:
        await provider.close()
