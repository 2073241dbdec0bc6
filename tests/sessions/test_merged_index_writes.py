"""Concurrent turns share one write of ``sessions.json``; the parsed index is kept while unchanged."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from clawbot.sessions.store import SessionStore
from clawbot.types import Usage

from tests.sessions.test_state_files import _run_together

KEYS = 20
TURNS = 5


def test_turns_ending_together_are_written_once_and_all_counted(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    keys = [f"agent:main:chat-{i}" for i in range(50)]

    async def turns() -> None:
        sessions = await asyncio.gather(*(store.open_merged(key) for key in keys))
        assert all(session.created for session in sessions)
        await asyncio.gather(*(store.record_turn_merged(key, usage=Usage(2, 1), model="m/x") for key in keys))

    asyncio.run(turns())
    assert store.writer("main").writes == 2  # 50 new sessions in one write, their 50 turns in another
    infos = {info.key: info for info in SessionStore(tmp_path).list("main")}
    assert sorted(infos) == sorted(keys)
    assert all(info.turns == 1 and info.usage == Usage(2, 1) for info in infos.values())
    assert len(list((tmp_path / "main").glob("*.jsonl"))) == 50


def test_two_processes_of_merged_turns_lose_no_update(tmp_path: Path) -> None:
    script = f"""
        import asyncio
        from clawbot.sessions.store import SessionStore
        from clawbot.types import Usage
        store = SessionStore(Path(sys.argv[1]))
        keys = [f"agent:main:{{sys.argv[2]}}-{{i}}" for i in range({KEYS})]

        async def chat(key):
            for _ in range({TURNS}):
                await store.open_merged(key)
                await store.record_turn_merged(key, usage=Usage(1, 1), model="m/x")
                await asyncio.sleep(0)

        async def main():
            await asyncio.gather(*(chat(key) for key in keys))

        asyncio.run(main())
        print(store.writer("main").writes)
        """
    root = tmp_path / "sessions"
    results = _run_together(script, [[str(root), "a"], [str(root), "b"]], tmp_path)
    for result in results:
        assert result.returncode == 0, result.stderr
        assert "Traceback" not in result.stderr, result.stderr
        assert int(result.stdout) < KEYS * TURNS  # merged: fewer writes than turns
    infos = {info.key: info for info in SessionStore(root).list("main")}
    assert len(infos) == 2 * KEYS
    assert all(info.turns == TURNS and info.usage == Usage(TURNS, TURNS) for info in infos.values())
    assert len(list((root / "main").glob("*.jsonl"))) == 2 * KEYS  # one session per key
    assert not list((root / "main").glob("*.tmp"))


def test_a_kept_index_sees_another_process_writing(tmp_path: Path) -> None:
    ours = SessionStore(tmp_path)
    key = "agent:main:main"
    ours.open(key)
    ours.record_turn(key, usage=Usage(1, 1), model="m/x")
    assert ours.get(key).turns == 1
    script = """
        import sys
        from pathlib import Path
        from clawbot.sessions.store import SessionStore
        from clawbot.types import Usage
        SessionStore(Path(sys.argv[1])).record_turn(sys.argv[2], usage=Usage(2, 2), model="m/y")
        """
    for turns in (2, 3):
        done = subprocess.run([sys.executable, "-c", textwrap.dedent(script), str(tmp_path), key], capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        seen = ours.get(key)
        assert seen.turns == turns and seen.model == "m/y"


def test_a_hand_edit_in_place_keeping_size_and_mtime_is_seen(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    key = "agent:main:main"
    store.open(key)
    store.record_turn(key, usage=Usage(1, 1), model="m/x")
    assert store.get(key).model == "m/x"
    path = tmp_path / "main" / "sessions.json"
    before = os.stat(path)
    text = path.read_text()
    path.write_text(text.replace('"m/x"', '"m/z"'))  # same inode, same size
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert store.get(key).model == "m/z"


def test_a_turn_cancelled_while_its_change_waits_still_has_it_written(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    key = "agent:main:main"

    async def cancelled_turn() -> None:
        await store.open_merged(key)
        task = asyncio.ensure_future(store.record_turn_merged(key, usage=Usage(1, 1), model="m/x"))
        await asyncio.sleep(0)  # the change is handed over, not yet written
        task.cancel()
        await asyncio.sleep(0.01)

    asyncio.run(cancelled_turn())
    assert SessionStore(tmp_path).get(key).turns == 1
