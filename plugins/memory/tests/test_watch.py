"""While clawbot runs, the index follows the files within the debounce, without a search."""

from __future__ import annotations

import asyncio
import contextlib
import time
from pathlib import Path

import sqlean

from .memory_support import WordsEmbedder, make_provider, write

DEBOUNCE_MS = 400
MARGIN_S = 30.0  # a loaded CI machine: the watcher's own batching, the sync, the scheduler


def indexed(state: Path, word: str) -> int:
    index = state / "memory" / "main.sqlite"
    if not index.exists():
        return 0
    # the index's own sqlite library: two sqlite libraries in one process must not share a file
    with contextlib.closing(sqlean.connect(str(index))) as conn:
        return conn.execute("select count(*) from chunks where text like ?", (f"%{word}%",)).fetchone()[0]


async def until(predicate, timeout: float) -> float:
    """Seconds until ``predicate()`` holds; fails after ``timeout``."""
    started = time.monotonic()
    while not predicate():
        assert time.monotonic() - started < timeout, "the index did not follow the files in time"
        await asyncio.sleep(0.05)
    return time.monotonic() - started


async def test_the_index_follows_edits_creations_and_deletions(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    state = tmp_path / "state"
    write(ws / "MEMORY.md", "Favourite colour: teal.\n")
    provider = make_provider(state, ws, WordsEmbedder(), watch_debounce_ms=DEBOUNCE_MS)
    try:
        await provider.start(agent_ids=["main"])
        while (status := await provider.status(agent_id="main")).last_sync is None or not status.watching:
            await asyncio.sleep(0.05)
        assert indexed(state, "teal") == 1
        await asyncio.sleep(0.3)  # the watch is set up

        # an edit
        write(ws / "MEMORY.md", "Favourite colour: crimson.\n")
        took = await until(lambda: indexed(state, "crimson") == 1, DEBOUNCE_MS / 1000 + MARGIN_S)
        assert took >= DEBOUNCE_MS / 1000 * 0.9  # it waited for quiet
        assert indexed(state, "teal") == 0

        # the memory folder appears after start, and a day file in it
        write(ws / "memory" / "2024-07-01.md", "Adopted a cat named Miso.\n")
        await until(lambda: indexed(state, "Miso") == 1, DEBOUNCE_MS / 1000 + MARGIN_S)
        await asyncio.sleep(0.3)
        write(ws / "memory" / "2024-07-02.md", "Miso knocked over a plant.\n")
        await until(lambda: indexed(state, "plant") == 1, DEBOUNCE_MS / 1000 + MARGIN_S)

        # a deletion
        (ws / "memory" / "2024-07-01.md").unlink()
        await until(lambda: indexed(state, "Adopted") == 0, DEBOUNCE_MS / 1000 + MARGIN_S)

        # files that are not memory do not count
        write(ws / "notes.txt", "Favourite colour: ochre\n")
        await asyncio.sleep(DEBOUNCE_MS / 1000 + 0.3)
        assert indexed(state, "ochre") == 0
    finally:
        await provider.close()
    assert not (await provider.status(agent_id="main")).watching
