"""The cross-process session lock: a waiting turn says whom it waits for, never blocks the event
loop, and gives the lock up when it is cancelled."""

from __future__ import annotations

import asyncio
import fcntl
import logging
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from clawbot.sessions.store import SessionStore
from clawbot.sessions.turnlock import turn_lock, turn_lock_path

KEY = "agent:main:main"

HOLDER = textwrap.dedent(
    """
    import asyncio, sys
    from pathlib import Path
    from clawbot.sessions.turnlock import turn_lock

    async def main():
        async with turn_lock(Path(sys.argv[1]), "agent:main:main"):
            print("held", flush=True)
            sys.stdin.readline()  # hold until the test says so

    asyncio.run(main())
    """
)


class OtherProcess:
    """A real second process that holds the session's lock until :meth:`release`."""

    def __init__(self, path: Path) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-c", HOLDER, str(path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        assert self.proc.stdout.readline().strip() == "held", self.proc.stderr.read()

    def release(self) -> None:
        self.proc.communicate("go\n", timeout=30)
        assert self.proc.returncode == 0


def _free(path: Path) -> bool:
    fd = os.open(path, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        return False
    finally:
        os.close(fd)


async def test_a_turn_waits_for_another_process_saying_so_without_blocking_the_loop(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    store = SessionStore(tmp_path)
    path = turn_lock_path(tmp_path / "main", KEY)
    other = OtherProcess(path)
    entered = asyncio.Event()

    async def turn() -> None:
        async with store.lane(KEY):
            entered.set()

    with caplog.at_level(logging.INFO, logger="clawbot.sessions.turnlock"):
        task = asyncio.create_task(turn())
        ticks = 0
        while ticks < 20:  # the loop keeps running while the turn waits
            await asyncio.sleep(0.01)
            ticks += 1
        assert not entered.is_set()
        other.release()
        await asyncio.wait_for(task, 10)
    waiting = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert waiting == [f"session {KEY} has a turn running in clawbot process {other.proc.pid}; waiting for it to finish"]
    assert any("the other process finished" in r.getMessage() for r in caplog.records)
    assert _free(path)


async def test_a_cancelled_wait_gives_the_lock_back(tmp_path: Path) -> None:
    path = turn_lock_path(tmp_path / "main", KEY)
    other = OtherProcess(path)

    async def turn() -> None:
        async with turn_lock(path, KEY):
            raise AssertionError("a cancelled turn must not run")

    task = asyncio.create_task(turn())
    await asyncio.sleep(0.05)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    other.release()
    for _ in range(200):  # the abandoned waiting thread gets the lock, then drops it at once
        if _free(path):
            break
        await asyncio.sleep(0.01)
    else:
        raise AssertionError("the cancelled wait kept the session locked")
    async with asyncio.timeout(5), turn_lock(path, KEY):
        pass


async def test_two_stores_in_one_process_also_take_turns(tmp_path: Path) -> None:
    """The lock belongs to an open file, not a process: a second store on one directory waits too."""
    first, second = SessionStore(tmp_path), SessionStore(tmp_path)
    order: list[str] = []
    release = asyncio.Event()

    async def hold(store: SessionStore, name: str) -> None:
        async with store.lane(KEY):
            order.append(f"{name} in")
            if name == "first":
                await release.wait()
            order.append(f"{name} out")

    holding = asyncio.create_task(hold(first, "first"))
    await asyncio.sleep(0.02)
    waiting = asyncio.create_task(hold(second, "second"))
    await asyncio.sleep(0.05)
    assert order == ["first in"]
    release.set()
    await asyncio.wait_for(asyncio.gather(holding, waiting), 10)
    assert order == ["first in", "first out", "second in", "second out"]


def test_lock_files_are_private_and_named_by_a_hash_of_any_key(tmp_path: Path) -> None:
    keys = [KEY, "agent:main:telegram:group:-100/../x", "agent:main:\ud800 odd"]
    paths = {turn_lock_path(tmp_path / "main", key) for key in keys}
    assert len(paths) == len(keys)
    assert all(p.parent == tmp_path / "main" / "locks" and p.name.endswith(".lock") and "/" not in p.stem for p in paths)

    async def lock_once() -> None:
        async with turn_lock(turn_lock_path(tmp_path / "main", KEY), KEY):
            pass

    asyncio.run(lock_once())
    made = turn_lock_path(tmp_path / "main", KEY)
    assert made.stat().st_mode & 0o777 == 0o600
    assert (tmp_path / "main" / "locks").stat().st_mode & 0o777 == 0o700


async def test_a_state_directory_that_cannot_hold_the_lock_does_not_stop_turns(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    (tmp_path / "main").mkdir()
    (tmp_path / "main" / "locks").write_text("not a directory")
    store = SessionStore(tmp_path)
    ran = 0
    with caplog.at_level(logging.WARNING):
        for _ in range(2):
            async with asyncio.timeout(5), store.lane(KEY):
                ran += 1
    assert ran == 2
    warnings = [r.getMessage() for r in caplog.records]
    assert len(warnings) == 1 and "cannot be locked" in warnings[0] and "not kept apart" in warnings[0]
