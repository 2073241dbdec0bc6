"""The in-memory vectors follow every change of the index: a search answers exactly as a
freshly built index would, after edits, new and deleted files, a model change and a forced
re-index, on both vector stores; an edit costs the changed rows, not a reload."""

from __future__ import annotations

from pathlib import Path

import pytest
from clawbot_memory import vectors
from clawbot_memory.vectors import VectorIndex

from .memory_support import WordsEmbedder, make_provider, write

QUERIES = ("oolong tea", "budget spreadsheet finance", "cat Miso plant", "espresso machine", "garden tomatoes")


def notes(ws: Path) -> None:
    write(ws / "MEMORY.md", "# Preferences\nLikes oolong tea.\nAllergic to peanuts.\n")
    for day in range(1, 9):
        lines = "\n".join(f"- Item {i}: day {day} went through the budget spreadsheet and the garden tomatoes." for i in range(day * 3))
        write(ws / "memory" / f"2024-06-{day:02d}.md", f"# Day {day}\n\n## Log\n{lines}\n")


def edit(ws: Path) -> None:
    write(ws / "memory" / "2024-06-03.md", "# Day 3\n\nThe cat Miso knocked over a plant.\n")


def add(ws: Path) -> None:
    write(ws / "memory" / "2024-07-01.md", "# July\n\nThe espresso machine arrived.\n\n## Garden\nTomatoes are red.\n")


def delete(ws: Path) -> None:
    (ws / "memory" / "2024-06-05.md").unlink()
    (ws / "memory" / "2024-06-08.md").unlink()


def rewrite_many(ws: Path) -> None:  # enough removed rows to compact the matrix
    for day in range(1, 8):
        write(ws / "memory" / f"2024-06-{day:02d}.md", f"# Day {day}\n\nOnly espresso today, number {day}.\n")


async def hits_of(provider) -> list[tuple]:
    """Per query: the scores, and the hits scoring above the last one (chunks tied at the cut
    may be either)."""
    out = []
    for query in QUERIES:
        found = await provider.search(query, agent_id="main", max_results=8, min_score=0.0)
        scores = [round(h.score, 5) for h in found.hits]
        sure = {(h.path, h.start_line, h.end_line, round(h.score, 5)) for h in found.hits if round(h.score, 5) > min(scores)}
        out.append((scores, sure))
    return out


async def fresh_hits(tmp_path: Path, ws: Path, name: str, embedder: WordsEmbedder, disable: list[str]) -> list[tuple]:
    fresh = make_provider(tmp_path / f"fresh-{name}", ws, embedder, disable=disable, chunk_tokens=64, chunk_overlap=8)
    try:
        return await hits_of(fresh)
    finally:
        await fresh.close()


@pytest.mark.parametrize("disable", [["fts5"], ["fts5", "sqlite-vec"]], ids=["sqlite-vec", "numpy"])
async def test_searches_after_each_change_answer_as_a_fresh_index(tmp_path: Path, disable: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    ws = tmp_path / "ws"
    notes(ws)
    embedder = WordsEmbedder(dims=32)
    provider = make_provider(tmp_path / "state", ws, embedder, disable=disable, chunk_tokens=64, chunk_overlap=8)
    try:
        assert await hits_of(provider) == await fresh_hits(tmp_path, ws, "start", embedder, disable)
        index = (await provider._agent("main")).store.vector_cache
        assert isinstance(index, VectorIndex)
        held = (await provider.status(agent_id="main")).details["vectors_in_memory"]
        assert held.endswith(" MB") and held == f"{index.bytes() / 1_048_576:.1f} MB"  # what `clawbot memory status` shows
        for step in (edit, add, delete, rewrite_many):
            before = index.get_newest()
            if step is rewrite_many:
                monkeypatch.setattr(vectors, "COMPACT_MIN", 0)  # a small index compacts too
            step(ws)
            await provider.sync(agent_id="main")
            after = index.get_newest()
            assert after.generation != before.generation
            if step is not rewrite_many:
                assert after.rows is before.rows  # followed in place: the arrays were not reloaded
            else:
                assert after.rows is not before.rows and after.dead_count == 0  # compacted
            assert await hits_of(provider) == await fresh_hits(tmp_path, ws, step.__name__, embedder, disable), step.__name__

        # another model (and other dimensions) replaces every vector
        other = WordsEmbedder(dims=48, model="other-words")
        switched = make_provider(tmp_path / "state", ws, other, disable=disable, chunk_tokens=64, chunk_overlap=8)
        try:
            assert await hits_of(switched) == await fresh_hits(tmp_path, ws, "model", other, disable)
            snap = (await switched._agent("main")).store.vector_cache.get_newest()
            assert snap.ident == other.cache_key and snap.rows.vectors.shape[1] == 48

            # a forced re-index keeps answering the same
            await switched.sync(agent_id="main", force=True)
            assert await hits_of(switched) == await fresh_hits(tmp_path, ws, "model", other, disable)
        finally:
            await switched.close()
    finally:
        await provider.close()


async def test_a_search_that_began_before_a_commit_keeps_its_snapshot(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    notes(ws)
    provider = make_provider(tmp_path / "state", ws, WordsEmbedder(dims=32), chunk_tokens=64, chunk_overlap=8)
    try:
        await provider.sync(agent_id="main")
        store = (await provider._agent("main")).store
        index = store.vector_cache
        conn = store.driver.connect(store.path)  # a search's read transaction, opened before the next commit
        try:
            conn.execute("begin")
            old = index.snapshot(conn, index.get_newest().ident)
            delete(ws)
            await provider.sync(agent_id="main")
            assert index.get_newest().generation != old.generation
            assert index.snapshot(conn, old.ident) is old  # still the state this transaction reads
            conn.execute("commit")
        finally:
            conn.close()
    finally:
        await provider.close()
