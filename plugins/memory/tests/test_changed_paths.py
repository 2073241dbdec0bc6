"""A large memory stays fast to update and to search: the watcher hands the changed paths to
the sync, which looks only at them (or at everything when only a full scan can tell), and a
search on a large memory relies on the watcher instead of a stat of every file."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import pytest
from clawbot_memory import provider as provider_module
from clawbot_memory.sources import Sources

from .memory_support import WordsEmbedder, make_provider, write


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    write(ws / "MEMORY.md", "Favourite colour: teal.\n")
    write(ws / "memory" / "2024-06-01.md", "Planted tomatoes.\n")
    write(ws / "memory" / "sub" / "2024-06-02.md", "Bought a kettle.\n")
    write(ws / "memory" / ".drafts" / "x.md", "a draft\n")
    write(ws / "notes.md", "not memory\n")
    write(ws / "memory" / "a.txt", "not Markdown\n")
    (ws / "memory" / "link.md").symlink_to(ws / "notes.md")
    return ws


KNOWN = {"MEMORY.md", "memory/2024-06-01.md", "memory/gone.md"}

CASES = [
    # (changed paths, relative to the workspace) -> (files to look at, removed) or None: full scan
    (["memory/2024-06-01.md"], (["memory/2024-06-01.md"], [])),
    (["MEMORY.md", "memory/sub/2024-06-02.md"], (["MEMORY.md", "memory/sub/2024-06-02.md"], [])),
    (["memory/gone.md"], ([], ["memory/gone.md"])),  # deleted, and in the index
    (["memory/never.md"], ([], [])),  # deleted before it was ever indexed
    (["notes.md", "memory/a.txt"], ([], [])),  # not memory
    (["memory/.drafts/x.md", "memory/.x.md.swp", "memory/.drafts"], ([], [])),  # hidden: the scan never lists them either
    (["memory/x.md~"], ([], [])),  # an editor's backup that came and went
    (["memory/sub"], None),  # a folder: what is in it is unknown
    (["memory"], None),
    (["memory/link.md"], None),  # a link: the scan checks where it leads
]


@pytest.mark.parametrize(("changed", "expected"), CASES, ids=[",".join(c) for c, _ in CASES])
def test_changed_paths_are_read_as_the_full_scan_would(ws: Path, changed: list[str], expected) -> None:
    sources = Sources.build(ws, [])
    found = sources.changed([ws / p for p in changed], KNOWN)
    if expected is None:
        assert found is None
        return
    files, gone, _vanished = found
    assert ([f.path for f in files], gone) == expected
    scanned = {f.path for f in sources.scan().files}
    assert all(f.path in scanned for f in files)  # never a file the scan would leave out


async def test_a_sync_handed_paths_looks_only_at_them(tmp_path: Path, ws: Path) -> None:
    provider = make_provider(tmp_path / "state", ws, WordsEmbedder())
    try:
        await provider.sync(agent_id="main")
        write(ws / "MEMORY.md", "Favourite colour: crimson.\n")
        write(ws / "memory" / "2024-06-01.md", "Planted courgettes.\n")
        report = await provider.sync(agent_id="main", paths=[ws / "MEMORY.md"])
        assert (report.files_indexed, report.files_unchanged, report.files_removed) == (1, 0, 0)
        assert report.chunks == 4  # MEMORY.md, two day files, and the link to notes.md
        store = (await provider._agent("main")).store

        def indexed(word: str) -> int:
            with store.read() as conn:
                return conn.execute("select count(*) from chunks where text like ?", (f"%{word}%",)).fetchone()[0]

        assert (indexed("crimson"), indexed("courgettes")) == (1, 0)  # not handed over: not looked at
        (ws / "memory" / "sub" / "2024-06-02.md").unlink()
        report = await provider.sync(agent_id="main", paths=[ws / "memory" / "sub"])  # a folder: a full scan
        assert (report.files_indexed, report.files_removed) == (1, 1)
        assert (indexed("courgettes"), indexed("kettle")) == (1, 0)
        write(ws / "memory" / "old" / "a.md", "Sold the bicycle.\n")
        await provider.sync(agent_id="main")
        (ws / "memory" / "old" / "a.md").unlink()
        (ws / "memory" / "old").rmdir()
        report = await provider.sync(agent_id="main", paths=[ws / "memory" / "old"])  # a folder that went: its files too
        assert report.files_removed == 1 and indexed("bicycle") == 0
    finally:
        await provider.close()


async def test_a_search_on_a_large_memory_syncs_what_the_watcher_saw(tmp_path: Path, ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(provider_module, "CHECK_BUDGET_S", 0.0)  # every memory counts as large
    provider = make_provider(tmp_path / "state", ws, WordsEmbedder(), watch_debounce_ms=60_000)
    try:
        await provider.start(agent_ids=["main"])
        while not (await provider.status(agent_id="main")).watching:
            await asyncio.sleep(0.05)
        await provider.search("teal", agent_id="main")  # the first search still checks every file
        watcher = (await provider._agent("main")).watcher
        await asyncio.sleep(0.3)  # the watch is set up
        write(ws / "MEMORY.md", "Favourite colour: crimson.\n")
        started = time.monotonic()
        while not watcher.pending:
            assert time.monotonic() - started < 60, "the watcher did not see the edit"
            await asyncio.sleep(0.02)
        found = await provider.search("crimson", agent_id="main", min_score=0.6)
        assert [h.path for h in found.hits] == ["MEMORY.md"]  # long before the debounce
        report = (await provider._agent("main")).last_report
        assert (report.files_indexed, report.files_unchanged) == (1, 0)  # only the edited file was looked at
        assert not watcher.pending
    finally:
        await provider.close()


async def test_a_reader_of_an_older_state_does_not_hold_a_sync_up(tmp_path: Path, ws: Path) -> None:
    provider = make_provider(tmp_path / "state", ws, WordsEmbedder())
    try:
        await provider.sync(agent_id="main")
        store = (await provider._agent("main")).store
        other = store.driver.connect(store.path)  # e.g. `clawbot memory search --stdin` in another process
        try:
            other.execute("begin")
            other.execute("select count(*) from chunks").fetchone()
            write(ws / "MEMORY.md", "Favourite colour: crimson.\n")
            os.utime(ws / "MEMORY.md", (1, 1))
            started = time.monotonic()
            await provider.sync(agent_id="main")
            assert time.monotonic() - started < 60  # held up, it would wait for the other reader to finish
            other.execute("commit")
        finally:
            other.close()
    finally:
        await provider.close()
