"""Every sqlite path the index can run on, for real: sqlean with sqlite-vec (hybrid), vectors
compared in process, the standard library's sqlite3, no FTS5 (vector only), no embedder
(keyword only), and neither. Each path is forced with ``plugins.memory.disable`` (or a module
that cannot be imported) and must index, search and say which mode it is in and why."""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path

import pytest
from clawbot_memory.driver import open_driver

from .memory_support import WordsEmbedder, make_provider, write

STDLIB_LOADS = hasattr(sqlite3.Connection, "enable_load_extension")


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    write(ws / "MEMORY.md", "# About me\nI drink green tea every morning.\n")
    write(ws / "memory" / "2024-03-01.md", "## Garden\nPlanted tomatoes and basil with Alice.\n")
    write(ws / "memory" / "2024-03-02.md", "## Trip\nBooked a train to Lisbon for the conference.\n")
    return ws


VEC = "sqlite-vec v"
NUMPY = "in-process cosine (numpy)"


@pytest.mark.parametrize(
    ("disable", "embedder", "mode", "driver", "vectors", "keyword", "reason"),
    [
        ([], True, "hybrid", "sqlean.py", VEC, "FTS5 (bm25)", None),
        (["sqlite-vec"], True, "hybrid", "sqlean.py", NUMPY, "FTS5 (bm25)", "sqlite-vec is turned off by plugins.memory.disable"),
        (["sqlean"], True, "hybrid", "sqlite3 (standard library", VEC if STDLIB_LOADS else NUMPY, "FTS5 (bm25)", "sqlean is turned off"),
        (["sqlean", "sqlite-vec"], True, "hybrid", "sqlite3 (standard library", NUMPY, "FTS5 (bm25)", "sqlite-vec is turned off"),
        (["fts5"], True, "vector", "sqlean.py", VEC, None, "FTS5 is turned off by plugins.memory.disable: no keyword search"),
        (["fts5", "sqlean", "sqlite-vec"], True, "vector", "sqlite3 (standard library", NUMPY, None, "no keyword search"),
        ([], False, "keyword", "sqlean.py", None, "FTS5 (bm25)", 'No embedder is configured (plugins.memory.embedder = "none")'),
        (["sqlean"], False, "keyword", "sqlite3 (standard library", None, "FTS5 (bm25)", "No embedder is configured"),
        (["fts5"], False, "unavailable", "sqlean.py", None, None, "no keyword search"),
    ],
    ids=["hybrid", "in-process", "stdlib", "stdlib-in-process", "vector-only", "stdlib-vector-only", "keyword-only", "stdlib-keyword", "unavailable"],
)
async def test_each_path_indexes_searches_and_says_why(
    tmp_path: Path, workspace: Path, disable: list[str], embedder: bool, mode: str, driver: str, vectors: str | None, keyword: str | None, reason: str | None
) -> None:
    provider = make_provider(tmp_path / "state", workspace, WordsEmbedder() if embedder else None, disable=disable)
    try:
        report = await provider.sync(agent_id="main")
        assert report.files_indexed == 3 and report.chunks == 3
        status = await provider.status(agent_id="main")
        assert (status.mode, status.keyword_backend) == (mode, keyword)
        assert status.driver.startswith(driver)
        assert (status.vector_backend or "").startswith(vectors or "") and (status.vector_backend is None) == (vectors is None)
        assert reason is None or any(reason in r for r in status.reasons), status.reasons
        assert reason is not None or status.reasons == ()

        found = await provider.search("tomatoes basil", agent_id="main")
        assert found.mode == mode
        if mode == "unavailable":
            assert found.hits == () and found.notice
        else:
            assert found.hits[0].path == "memory/2024-03-01.md"
            assert (found.hits[0].start_line, found.hits[0].end_line) == (1, 2)
            assert "Planted tomatoes" in found.hits[0].snippet
            assert (found.provider is not None) == (mode in ("hybrid", "vector"))
    finally:
        await provider.close()


async def test_the_vector_paths_agree(tmp_path: Path, workspace: Path) -> None:
    """sqlite-vec KNN and the in-process cosine rank the same chunks with the same scores."""
    results = []
    for disable in ([], ["sqlite-vec"]):
        provider = make_provider(tmp_path / f"state-{len(disable)}", workspace, WordsEmbedder(), disable=disable + ["fts5"])
        try:
            found = await provider.search("a train to the conference", agent_id="main")
            results.append([(h.path, round(h.score, 4)) for h in found.hits])
        finally:
            await provider.close()
    assert results[0] == results[1] and results[0][0][0] == "memory/2024-03-02.md"


def test_a_sqlean_that_cannot_be_imported_falls_back_to_the_standard_sqlite3(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "sqlean", None)  # what an interpreter without the wheel sees
    driver = open_driver()
    assert driver.name.startswith("sqlite3 (standard library")
    assert any(r.startswith("sqlean.py could not be imported") for r in driver.reasons)


def test_a_sqlite_vec_that_cannot_load_leaves_cosine_in_process(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "sqlite_vec", None)
    driver = open_driver()
    assert driver.name.startswith("sqlean.py") and driver.vec_version is None and driver.vector_backend == NUMPY
    assert any(r.startswith("sqlite-vec could not load") for r in driver.reasons)


async def test_an_index_follows_the_driver_it_is_opened_with(tmp_path: Path, workspace: Path) -> None:
    """The same index file opened without FTS5 or sqlite-vec keeps working, and files added
    meanwhile are found by both once they are back."""
    state = tmp_path / "state"
    first = make_provider(state, workspace, WordsEmbedder())
    await first.sync(agent_id="main")
    await first.close()

    degraded = make_provider(state, workspace, WordsEmbedder(), disable=["fts5", "sqlite-vec"])
    write(workspace / "memory" / "2024-03-03.md", "Repaired the bicycle chain.\n")
    assert (await degraded.sync(agent_id="main")).files_indexed == 1
    assert (await degraded.search("bicycle chain", agent_id="main")).hits[0].path == "memory/2024-03-03.md"
    await degraded.close()

    full = make_provider(state, workspace, WordsEmbedder())
    try:
        assert (await full.sync(agent_id="main")).files_indexed == 0
        words = await full.search("bicycle", agent_id="main", min_score=0.5)
        assert [h.path for h in words.hits][:1] == ["memory/2024-03-03.md"]
        status = await full.status(agent_id="main")
        assert status.vector_backend.startswith(VEC)
        near = make_provider(state, workspace, WordsEmbedder(), disable=["fts5"])
        try:
            assert (await near.search("bicycle chain", agent_id="main")).hits[0].path == "memory/2024-03-03.md"
        finally:
            await near.close()
    finally:
        await full.close()
