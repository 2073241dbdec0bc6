"""Memory is read only where the listing allowed it, at the moment it is read: a file swapped
for a link or a pipe after it was listed, a hidden file, a file too big to be memory."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import pytest
from clawbot.testing import HOSTILE_KINDS, HOSTILE_SECRET, call_in_thread, plant_hostile, secret_outside
from clawbot.types import MemoryPathError, MemorySyncProgress
from clawbot_memory.excerpt import read_lines
from clawbot_memory.sources import MAX_FILE_BYTES, Sources

from .memory_support import make_provider, write

SECRET = "the launch codes are 0000\n"


def swap(path: Path, how: str, outside: Path) -> None:
    """Replace ``path`` as an attacker racing the indexer would."""
    path.unlink()
    if how == "link-out":
        path.symlink_to(outside)
    elif how == "pipe":
        os.mkfifo(path)
    elif how == "dir-link-out":
        path.parent.rename(path.parent.with_name("was"))
        path.parent.symlink_to(outside.parent, target_is_directory=True)


@pytest.mark.parametrize("how", ["link-out", "pipe"])
async def test_a_file_swapped_after_the_listing_is_not_indexed(tmp_path: Path, how: str) -> None:
    ws = tmp_path / "ws"
    write(ws / "MEMORY.md", "# Me\nplain notes\n")
    target = write(ws / "memory" / "day.md", "# Day\nlunch\n")
    outside = write(tmp_path / "private" / "secret.md", SECRET)
    provider = make_provider(tmp_path / "state", ws)

    def race(step: MemorySyncProgress) -> None:  # MEMORY.md is read first, then the swap
        if step.path == "MEMORY.md":
            swap(target, how, outside)

    try:
        report = await provider.sync(agent_id="main", progress=race)
        assert dict(report.skipped)["memory/day.md"].startswith("it ")
        assert (await provider.search("launch codes", agent_id="main")).hits == ()
    finally:
        await provider.close()


@pytest.mark.parametrize("how", ["link-out", "dir-link-out"])
def test_a_file_swapped_after_it_was_named_is_not_opened(tmp_path: Path, how: str) -> None:
    ws = tmp_path / "ws"
    target = write(ws / "memory" / "secret.md", "# Day\nlunch\n")
    outside = write(tmp_path / "private" / "secret.md", SECRET)
    sources = Sources.build(ws, [])
    named = sources.resolve("memory/secret.md")  # what memory_get checked
    swap(target, how, outside)
    with pytest.raises(MemoryPathError, match="links outside the workspace"):
        sources.open(named)


@pytest.mark.parametrize("path", ["memory/.secret.md", "memory/.git/notes.md", ".hidden/x.md"])
async def test_hidden_files_are_not_memory_for_get_as_for_the_index(tmp_path: Path, path: str) -> None:
    ws = tmp_path / "ws"
    write(ws / "memory" / "day.md", "lunch\n")
    write(ws / "memory" / ".secret.md", "hidden\n")
    write(ws / "memory" / ".git" / "notes.md", "hidden\n")
    extra = write(tmp_path / "vault" / ".hidden" / "x.md", "hidden\n")
    provider = make_provider(tmp_path / "state", ws, extra_paths=[str(tmp_path / "vault")])
    try:
        await provider.sync(agent_id="main")
        assert (await provider.search("hidden", agent_id="main")).hits == ()
        name = str(extra) if path.startswith(".hidden") else path
        with pytest.raises(MemoryPathError, match="is not a memory file"):
            await provider.get(name, agent_id="main")
    finally:
        await provider.close()


async def test_get_refuses_a_file_too_big_to_be_memory_without_reading_it(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    big = ws / "memory" / "dump.md"
    big.parent.mkdir(parents=True)
    with open(big, "wb") as handle:  # sparse: costs no disk
        handle.truncate(MAX_FILE_BYTES + 1)
    provider = make_provider(tmp_path / "state", ws)
    try:
        with pytest.raises(MemoryPathError, match="larger than 16 MB"):
            await provider.get("memory/dump.md", agent_id="main", lines=1)
    finally:
        await provider.close()


def test_get_stops_at_the_size_cap_when_the_file_grows_after_its_size_was_checked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What ``yes >> memory/notes.md`` in the background does: the size is fine when checked,
    then the file grows without end; memory_get refuses it at the cap instead of holding it all."""
    monkeypatch.setattr("clawbot_memory.excerpt.MAX_FILE_BYTES", 1_000_000)  # 1 MB stands for 16 MB
    target = tmp_path / "memory" / "notes.md"
    write(target, "start\n")
    sources = Sources.build(tmp_path, [])
    file = sources.resolve("memory/notes.md")
    real_fstat = os.fstat
    grown = []

    def size_then_grow(fd: int) -> os.stat_result:  # the writer runs right after the size check
        info = real_fstat(fd)
        if not grown and sys._getframe(1).f_code.co_filename.endswith("excerpt.py"):
            with open(target, "a") as out:
                out.write("y\n" * 1_500_000)
            grown.append(True)
        return info

    monkeypatch.setattr(os, "fstat", size_then_grow)
    with pytest.raises(MemoryPathError, match="too big to be memory"):
        read_lines(sources, file, 1, None)
    assert grown


async def test_a_huge_query_is_searched_by_its_beginning(tmp_path: Path) -> None:
    from clawbot_memory.provider import MAX_QUERY_CHARS

    from .memory_support import WordsEmbedder

    ws = tmp_path / "ws"
    write(ws / "MEMORY.md", "# Me\nThe boat is called Pineapple.\n")
    embedder = WordsEmbedder()
    provider = make_provider(tmp_path / "state", ws, embedder)
    try:
        found = await provider.search("pineapple boat " * 100_000, agent_id="main")
        assert [h.path for h in found.hits] == ["MEMORY.md"]
        assert len(embedder.queries[-1]) <= MAX_QUERY_CHARS
    finally:
        await provider.close()


@pytest.mark.parametrize("kind", HOSTILE_KINDS)
def test_each_hostile_file_in_memory_is_skipped_by_the_index_and_refused_by_get_without_blocking(tmp_path: Path, kind: str) -> None:
    """The same table as every other reader of workspace files (tests/agent/test_workspace_file_readers.py)."""
    ws = tmp_path / "ws"
    write(ws / "MEMORY.md", "# Me\nplain notes\n")
    target = ws / "memory" / "day.md"
    plant_hostile(kind, target, secret_outside(tmp_path / "private"))

    async def read() -> tuple[dict[str, str], list[str], str]:
        provider = make_provider(tmp_path / "state", ws)
        try:
            report = await provider.sync(agent_id="main")
            found = await provider.search(HOSTILE_SECRET, agent_id="main")
            try:
                excerpt = await provider.get("memory/day.md", agent_id="main")
                got = f"read: {excerpt.text}"
            except MemoryPathError as exc:
                got = f"refused: {exc}"
            return dict(report.skipped), [hit.path for hit in found.hits], got
        finally:
            await provider.close()

    skipped, hits, got = call_in_thread(lambda: asyncio.run(read()), fifos=(target,))
    assert hits == []
    assert got.startswith("refused: "), got
    assert HOSTILE_SECRET not in got
    if kind in ("huge", "not-utf8", "link-out"):  # listed as memory, then skipped saying why
        assert skipped["memory/day.md"].startswith("it "), skipped


async def test_a_hard_link_to_a_private_file_is_not_memory(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    write(ws / "MEMORY.md", "# Me\nplain notes\n")
    secret = secret_outside(tmp_path / "private")
    (ws / "memory").mkdir()
    os.link(secret, ws / "memory" / "day.md")  # same file, a name inside the workspace
    provider = make_provider(tmp_path / "state", ws)
    try:
        report = await provider.sync(agent_id="main")
        assert "hard links" in dict(report.skipped)["memory/day.md"]
        assert (await provider.search(HOSTILE_SECRET, agent_id="main")).hits == ()
        with pytest.raises(MemoryPathError, match="hard links"):
            await provider.get("memory/day.md", agent_id="main")
    finally:
        await provider.close()
