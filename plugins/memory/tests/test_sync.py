"""Sync: incremental, cached embeddings, model changes, deletions, bad files, links, rebuilds."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import pytest
import sqlean
from clawbot.types import MemorySyncProgress

from .memory_support import WordsEmbedder, make_provider, write


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    write(ws / "MEMORY.md", "# Me\nI prefer trains to planes.\n")
    write(ws / "memory" / "2024-05-01.md", "Lunch with Priya at the Thai place.\n")
    write(ws / "memory" / "notes" / "books.md", "Reading Dune, then Hyperion.\n")
    write(ws / "notes.md", "Not memory: a workspace file outside memory/.\n")
    write(ws / "memory" / "todo.txt", "not Markdown\n")
    return ws


def index_rows(state: Path, sql: str) -> list[tuple]:
    # the index's own sqlite library: two sqlite libraries in one process must not share a file
    with contextlib.closing(sqlean.connect(str(state / "memory" / "main.sqlite"))) as conn:
        return conn.execute(sql).fetchall()


async def test_only_memory_files_are_indexed_and_progress_is_reported(tmp_path: Path, workspace: Path) -> None:
    provider = make_provider(tmp_path / "state", workspace, WordsEmbedder())
    seen: list[MemorySyncProgress] = []
    try:
        report = await provider.sync(agent_id="main", progress=seen.append)
    finally:
        await provider.close()
    assert [p.path for p in seen] == ["MEMORY.md", "memory/2024-05-01.md", "memory/notes/books.md"]
    assert [(p.done, p.total) for p in seen] == [(1, 3), (2, 3), (3, 3)]
    assert (report.files_indexed, report.chunks, report.embedded, report.skipped) == (3, 3, 3, ())
    assert index_rows(tmp_path / "state", "select path, source from files order by path") == [
        ("MEMORY.md", "memory"),
        ("memory/2024-05-01.md", "memory"),
        ("memory/notes/books.md", "memory"),
    ]


async def test_a_second_sync_reads_nothing_and_embeds_nothing(tmp_path: Path, workspace: Path) -> None:
    embedder = WordsEmbedder()
    provider = make_provider(tmp_path / "state", workspace, embedder)
    try:
        await provider.sync(agent_id="main")
        again = await provider.sync(agent_id="main")
        assert (again.files_indexed, again.files_unchanged, again.embedded) == (0, 3, 0)

        # one file changes: only it is chunked again, only its new text embedded
        write(workspace / "memory" / "2024-05-01.md", "Lunch with Priya at the Thai place.\n\nDinner with Tom.\n")
        embedder.documents.clear()
        changed = await provider.sync(agent_id="main")
        assert (changed.files_indexed, changed.files_unchanged, changed.embedded) == (1, 2, 1)
        assert embedder.documents == ["Lunch with Priya at the Thai place.\n\nDinner with Tom."]

        # touched but identical: re-read, not re-chunked, nothing embedded
        os.utime(workspace / "MEMORY.md", ns=(1, 1))
        touched = await provider.sync(agent_id="main")
        assert (touched.files_indexed, touched.embedded) == (0, 0)
        assert not await _stale(provider)
    finally:
        await provider.close()


async def _stale(provider) -> bool:
    return (await provider.status(agent_id="main")).dirty


async def test_forced_reindex_takes_vectors_from_the_cache(tmp_path: Path, workspace: Path) -> None:
    embedder = WordsEmbedder()
    provider = make_provider(tmp_path / "state", workspace, embedder)
    try:
        await provider.sync(agent_id="main")
        embedder.documents.clear()
        forced = await provider.sync(agent_id="main", force=True)
        assert (forced.files_indexed, forced.embedded, forced.cache_hits) == (3, 0, 3)
        assert embedder.documents == []
        # the same text in a new file is not embedded either
        write(workspace / "memory" / "copy.md", "Reading Dune, then Hyperion.\n")
        copied = await provider.sync(agent_id="main")
        assert (copied.embedded, copied.cache_hits) == (0, 1)
    finally:
        await provider.close()


async def test_a_model_or_dimension_change_re_embeds_everything(tmp_path: Path, workspace: Path) -> None:
    state = tmp_path / "state"
    first = make_provider(state, workspace, WordsEmbedder(dims=64))
    await first.sync(agent_id="main")
    await first.close()
    assert index_rows(state, "select value from meta where key = 'vec_dims'") == [("64",)]

    bigger = WordsEmbedder(dims=96, model="bag-of-words-2")
    second = make_provider(state, workspace, bigger)
    try:
        assert (await second.status(agent_id="main")).dirty  # the embedder changed: stale
        report = await second.sync(agent_id="main")
        assert (report.files_indexed, report.embedded) == (0, 3)
        assert sorted(bigger.documents) == sorted(["# Me\nI prefer trains to planes.", "Lunch with Priya at the Thai place.", "Reading Dune, then Hyperion."])
        found = await second.search("Dune Hyperion", agent_id="main")
        assert found.hits[0].path == "memory/notes/books.md" and found.model == "bag-of-words-2"
    finally:
        await second.close()
    assert index_rows(state, "select value from meta where key = 'vec_dims'") == [("96",)]
    assert index_rows(state, "select distinct model from chunks") == [("words:bag-of-words-2:96",)]


async def test_deleted_files_leave_the_index(tmp_path: Path, workspace: Path) -> None:
    provider = make_provider(tmp_path / "state", workspace, WordsEmbedder())
    try:
        await provider.sync(agent_id="main")
        (workspace / "memory" / "notes" / "books.md").unlink()
        report = await provider.sync(agent_id="main")
        assert (report.files_removed, report.chunks) == (1, 2)
        assert all(h.path != "memory/notes/books.md" for h in (await provider.search("Dune Hyperion", agent_id="main")).hits)
    finally:
        await provider.close()
    assert index_rows(tmp_path / "state", "select count(*) from chunks where path = 'memory/notes/books.md'") == [(0,)]


async def test_bad_files_are_skipped_by_name_and_the_rest_indexed(tmp_path: Path, workspace: Path, caplog: pytest.LogCaptureFixture) -> None:
    (workspace / "memory" / "latin1.md").write_bytes("caf\xe9 au lait\n".encode("latin-1"))
    (workspace / "memory" / "binary.md").write_bytes(b"\x00\x01\x02 not text\n")
    locked = write(workspace / "memory" / "locked.md", "private\n")
    locked.chmod(0)
    provider = make_provider(tmp_path / "state", workspace, WordsEmbedder())
    try:
        report = await provider.sync(agent_id="main")
        skipped = dict(report.skipped)
        assert skipped["memory/latin1.md"] == "it is not UTF-8 text (byte 3)"
        assert skipped["memory/binary.md"] == "it is binary, not Markdown (it contains NUL bytes)"
        root = os.geteuid() == 0  # root reads anything
        if not root:
            assert skipped["memory/locked.md"].startswith("it could not be read (Permission denied")
        assert report.files_indexed == 3 + root
        assert "latin1.md" in caplog.text
        # still skipped, still said, and not read again while unchanged
        again = await provider.sync(agent_id="main")
        assert dict(again.skipped)["memory/latin1.md"] == "it is not UTF-8 text (byte 3)"
        assert not (await provider.status(agent_id="main")).dirty
        # fixed: indexed
        write(workspace / "memory" / "latin1.md", "café au lait\n")
        fixed = await provider.sync(agent_id="main")
        assert "memory/latin1.md" not in dict(fixed.skipped) and fixed.files_indexed == 1
        assert (await provider.search("café", agent_id="main")).hits[0].path == "memory/latin1.md"
    finally:
        locked.chmod(0o644)
        await provider.close()


async def test_links_out_of_the_workspace_are_refused(tmp_path: Path, workspace: Path) -> None:
    secret = write(tmp_path / "elsewhere" / "secret.md", "the launch codes are 1234\n")
    (workspace / "memory" / "leak.md").symlink_to(secret)
    (workspace / "memory" / "leakdir").symlink_to(secret.parent, target_is_directory=True)
    (workspace / "memory" / "inside.md").symlink_to(workspace / "MEMORY.md")  # inside: the same file, once
    provider = make_provider(tmp_path / "state", workspace, WordsEmbedder())
    try:
        report = await provider.sync(agent_id="main")
        assert dict(report.skipped) == {
            "memory/leak.md": "it links outside the workspace and the extra paths",
            "memory/leakdir": "it links outside the workspace and the extra paths",
        }
        assert report.files_indexed == 3
        found = await provider.search("launch codes", agent_id="main")
        assert found.hits and not any("launch" in h.snippet for h in found.hits)
        assert sorted(h.path for h in found.hits) == ["MEMORY.md", "memory/2024-05-01.md", "memory/notes/books.md"]
    finally:
        await provider.close()


async def test_extra_paths_are_indexed_and_links_inside_them_may_not_leave(tmp_path: Path, workspace: Path) -> None:
    extra = tmp_path / "vault"
    write(extra / "projects.md", "Project Falcon ships in June.\n")
    write(extra / "deep" / "more.md", "Falcon budget approved.\n")
    write(extra / "skip.txt", "not markdown\n")
    (extra / "deep" / "out.md").symlink_to(write(tmp_path / "outside.md", "Falcon secret\n"))
    single = write(tmp_path / "single" / "one.md", "Falcon single file.\n")
    provider = make_provider(tmp_path / "state", workspace, WordsEmbedder(), extra_paths=[str(extra), str(single)])
    try:
        report = await provider.sync(agent_id="main")
        assert dict(report.skipped) == {str(extra / "deep" / "out.md"): "it links outside the workspace and the extra paths"}
        found = await provider.search("Falcon", agent_id="main", min_score=0.3)
        assert sorted((h.path, h.source) for h in found.hits) == sorted(
            [(str(extra / "deep" / "more.md"), "extra"), (str(extra / "projects.md"), "extra"), (str(single), "extra")]
        )
    finally:
        await provider.close()


async def test_deleting_the_index_loses_nothing(tmp_path: Path, workspace: Path) -> None:
    state = tmp_path / "state"
    provider = make_provider(state, workspace, WordsEmbedder())
    try:
        before = await provider.search("Priya Thai lunch", agent_id="main")
    finally:
        await provider.close()
    for name in os.listdir(state / "memory"):
        (state / "memory" / name).unlink()
    again = make_provider(state, workspace, WordsEmbedder())
    try:
        after = await again.search("Priya Thai lunch", agent_id="main")  # stale: rebuilt first
        assert after.hits == before.hits and after.hits[0].path == "memory/2024-05-01.md"
    finally:
        await again.close()


@pytest.mark.parametrize(
    "content",
    [b"this is not a database at all, just text" * 100, b"SQLite format 3\x00" + b"\xff" * 4000, "foreign"],
    ids=["text", "damaged-header", "foreign-sqlite"],
)
async def test_a_corrupt_or_foreign_index_file_is_moved_aside_and_rebuilt(tmp_path: Path, workspace: Path, content: bytes | str) -> None:
    index = tmp_path / "state" / "memory" / "main.sqlite"
    index.parent.mkdir(parents=True)
    if content == "foreign":
        with contextlib.closing(sqlean.connect(str(index))) as conn:
            conn.execute("create table photos(id integer primary key, name text)")
            conn.execute("insert into photos(name) values ('cat.jpg')")
            conn.commit()
        content = index.read_bytes()
    else:
        index.write_bytes(content)
    provider = make_provider(tmp_path / "state", workspace, WordsEmbedder())
    try:
        found = await provider.search("Priya", agent_id="main")
        assert found.hits[0].path == "memory/2024-05-01.md"
        status = await provider.status(agent_id="main")
        assert status.details["notices"] and "was moved aside" in status.details["notices"][0]
    finally:
        await provider.close()
    aside = [p for p in index.parent.iterdir() if ".broken-" in p.name]
    assert len(aside) == 1 and aside[0].read_bytes() == content


async def test_an_embedder_that_fails_during_sync_leaves_keyword_search_and_retries(tmp_path: Path, workspace: Path) -> None:
    embedder = WordsEmbedder()
    embedder.fail = "the embedding server is down"
    provider = make_provider(tmp_path / "state", workspace, embedder)
    try:
        report = await provider.sync(agent_id="main")
        assert (report.files_indexed, report.chunks, report.embedded) == (3, 3, 0)
        status = await provider.status(agent_id="main")
        assert "the embedding server is down" in status.last_error
        embedder.fail = None
        # the chunks are found by their words meanwhile
        assert (await provider.search("Hyperion", agent_id="main")).hits[0].path == "memory/notes/books.md"
        retried = await provider.sync(agent_id="main")
        assert (retried.files_indexed, retried.embedded) == (0, 3)
        assert (await provider.status(agent_id="main")).last_error is None
    finally:
        await provider.close()
    assert index_rows(tmp_path / "state", "select count(*) from chunks where embedding is null") == [(0,)]
