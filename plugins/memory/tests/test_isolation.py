"""Each agent's index holds that agent's files and nothing else, whatever its id looks like
and however its workspace moved."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from .memory_support import make_provider, write

SECRET = "# Notes\nThe vault code is pineapple.\n"
OTHER = "# Notes\nBob likes zebra crossings...\n"  # the same size as SECRET


def same_stat(a: Path, b: Path) -> None:
    """``b`` given ``a``'s size and mtime: the index cannot tell them apart by a stat."""
    assert a.stat().st_size == b.stat().st_size
    st = a.stat()
    os.utime(b, ns=(st.st_atime_ns, st.st_mtime_ns))


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("ops_x", "ops/x"),  # characters a file name cannot hold
        ("main_", "main?"),
        ("Work", "work"),  # one file on a case-insensitive disk (macOS, Windows)
        ("_", ""),
        ("..", "_"),
    ],
)
async def test_two_agents_never_share_an_index(tmp_path: Path, first: str, second: str) -> None:
    spaces = {first: tmp_path / "ws1", second: tmp_path / "ws2"}
    secret = write(spaces[first] / "MEMORY.md", SECRET)
    other = write(spaces[second] / "MEMORY.md", OTHER)
    same_stat(secret, other)
    provider = make_provider(tmp_path / "state", spaces)
    try:
        await provider.sync(agent_id=first)
        found = await provider.search("pineapple vault", agent_id=second)
        assert found.hits == ()
        mine = await provider.search("zebra", agent_id=second)
        assert [h.snippet for h in mine.hits] == [OTHER.strip()]
        paths = {(await provider.status(agent_id=a)).index_path for a in (first, second)}
        assert len({p.lower() for p in paths}) == 2
        assert all(Path(p).parent == tmp_path / "state" / "memory" for p in paths)
    finally:
        await provider.close()


async def test_an_agent_whose_workspace_moved_never_sees_the_old_files(tmp_path: Path) -> None:
    old, new = tmp_path / "old", tmp_path / "new"
    secret = write(old / "MEMORY.md", SECRET)
    other = write(new / "MEMORY.md", OTHER)
    same_stat(secret, other)
    first = make_provider(tmp_path / "state", old)
    try:
        await first.sync(agent_id="main")
    finally:
        await first.close()
    moved = make_provider(tmp_path / "state", new)  # the config now names another workspace
    try:
        assert (await moved.search("pineapple vault", agent_id="main")).hits == ()
        assert [h.snippet for h in (await moved.search("zebra", agent_id="main")).hits] == [OTHER.strip()]
    finally:
        await moved.close()
