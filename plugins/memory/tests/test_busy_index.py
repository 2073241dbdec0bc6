"""An index another process is writing (``clawbot memory index`` beside a running gateway)
is busy, not broken: it is never moved aside, and searches answer from its last state."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from clawbot_memory import driver

from .memory_support import make_provider, write

HOLD = """
import sqlean, sys, time
conn = sqlean.connect(sys.argv[1], isolation_level=None)
conn.execute("begin immediate")
print("held", flush=True)
sys.stdin.readline()
"""


@contextmanager
def write_locked(index: Path) -> Iterator[None]:
    """Another process holding the index's write lock until the block ends."""
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(index)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        yield
    finally:
        holder.communicate("\n", timeout=30)


@pytest.mark.parametrize("opened", [False, True], ids=["opening-the-index", "syncing-an-open-index"])
async def test_a_busy_index_is_searched_as_it_was_and_never_moved_aside(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, opened: bool) -> None:
    monkeypatch.setattr(driver, "BUSY_TIMEOUT_S", 0.3)  # the other process holds on longer than we wait
    ws = tmp_path / "ws"
    write(ws / "MEMORY.md", "# Me\nThe boat is called Pineapple.\n")
    state = tmp_path / "state"
    first = make_provider(state, ws)
    try:
        await first.sync(agent_id="main")
    finally:
        await first.close()
    index = state / "memory" / "main.sqlite"
    provider = make_provider(state, ws)
    try:
        if opened:
            await provider.search("boat", agent_id="main")
        write(ws / "memory" / "2024-05-01.md", "Bought a second boat.\n")  # stale: the search wants to sync
        with write_locked(index):
            found = await provider.search("Pineapple", agent_id="main")
            status = await provider.status(agent_id="main")
        assert [h.path for h in found.hits] == ["MEMORY.md"]
        assert found.notice and "could not be brought up to date" in found.notice and "locked" in found.notice
        assert status.last_error and "locked" in status.last_error
        assert status.details["notices"] == []
        assert sorted(p.name for p in index.parent.iterdir() if ".broken-" in p.name) == []
        # the lock gone, the next search catches up
        again = await provider.search("second boat", agent_id="main")
        assert again.notice is None and "memory/2024-05-01.md" in [h.path for h in again.hits]
    finally:
        await provider.close()
