"""Killing a command's process group (what exec does on a timeout or ``process kill``) still
ends everything it started, inside every mechanism."""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import signal
import time
from pathlib import Path

import pytest
from clawbot_tools.runtime.sandbox import SandboxPolicy

from .sandbox_variants import ALL
from .sandbox_world import PATH, PYTHON, mechanism


def _sleeper(marker: str) -> str:
    return f"{PYTHON} -c 'import time; time.sleep(300)' {marker} </dev/null >/dev/null 2>&1"


def _marked(marker: str) -> list[int]:
    """Host pids whose command line carries ``marker``."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                if marker.encode() in (entry / "cmdline").read_bytes().split(b"\0"):
                    found.append(int(entry.name))
    return found


async def _until(condition, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        await asyncio.sleep(0.05)
    return condition()


async def _start(name: str, line: str, tmp_path: Path) -> asyncio.subprocess.Process:
    ws, temp = tmp_path / "ws", tmp_path / "tmp"
    ws.mkdir()
    temp.mkdir(mode=0o700)
    policy = SandboxPolicy(workspace=str(ws), temp_dir=str(temp))
    launch = mechanism(name).prepare(["/bin/sh", "-c", line], env={"PATH": PATH}, cwd=str(ws), policy=policy)
    try:
        return await asyncio.create_subprocess_exec(
            *launch.argv,
            env=launch.env,
            cwd=launch.cwd,
            preexec_fn=launch.preexec_fn,
            pass_fds=launch.pass_fds,
            start_new_session=True,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
        )
    finally:
        launch.close()


async def _kill_group(process: asyncio.subprocess.Process) -> None:
    """What exec does: SIGTERM to the group, SIGKILL to whatever is left after a grace period."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGTERM)
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(process.wait(), 2)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    await process.wait()


@pytest.mark.parametrize("name", ALL)
async def test_a_timeout_kills_the_whole_tree(tmp_path: Path, name: str) -> None:
    marker = f"tree-{secrets.token_hex(4)}"
    line = f"{_sleeper(marker)} & ( {_sleeper(marker)} & ) ; {_sleeper(marker)} & echo ready; wait"
    process = await _start(name, line, tmp_path)
    try:
        assert await process.stdout.readline() == b"ready\n"
        assert await _until(lambda: len(_marked(marker)) == 3, 60), _marked(marker)
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(process.wait(), 0.5)
    finally:
        await _kill_group(process)
    assert await _until(lambda: not _marked(marker), 5), f"survivors under {name}: {_marked(marker)}"


async def test_under_bwrap_even_a_process_that_left_the_group_dies_with_it(tmp_path: Path) -> None:
    # Under Landlock and "off" a setsid child leaves the process group and survives the
    # kill (still confined under Landlock); bwrap's pid namespace ends with its init.
    marker = f"setsid-{secrets.token_hex(4)}"
    process = await _start("bwrap", f"setsid {_sleeper(marker)} & echo ready; wait", tmp_path)
    try:
        assert await process.stdout.readline() == b"ready\n"
        assert await _until(lambda: len(_marked(marker)) == 1, 60)
    finally:
        await _kill_group(process)
    assert await _until(lambda: not _marked(marker), 5), _marked(marker)


async def test_under_bwrap_background_children_end_with_the_shell(tmp_path: Path) -> None:
    marker = f"leftover-{secrets.token_hex(4)}"
    process = await _start("bwrap", f"{_sleeper(marker)} & sleep 0.5; echo done", tmp_path)
    try:
        assert await asyncio.wait_for(process.stdout.read(), 10) == b"done\n"
        assert await asyncio.wait_for(process.wait(), 5) == 0
        assert await _until(lambda: not _marked(marker), 5), _marked(marker)
    finally:
        await _kill_group(process)


async def test_under_bwrap_the_sandbox_dies_with_clawbot(tmp_path: Path) -> None:
    import sys

    marker = f"orphan-{secrets.token_hex(4)}"
    ws, temp = tmp_path / "ws", tmp_path / "tmp"
    ws.mkdir()
    temp.mkdir(mode=0o700)
    # A stand-in for clawbot starts a sandboxed command and dies without killing it.
    script = (
        "import subprocess, os\n"
        "from clawbot_tools.runtime.sandbox import SandboxPolicy\n"
        "from clawbot_tools.runtime.sandbox.choose import probe\n"
        f"policy = SandboxPolicy(workspace={str(ws)!r}, temp_dir={str(temp)!r})\n"
        f"launch = probe('bwrap')[0].prepare(['/bin/sh', '-c', {_sleeper(marker)!r}], env={{'PATH': {PATH!r}}}, cwd={str(ws)!r}, policy=policy)\n"
        "subprocess.Popen(launch.argv, env=launch.env, cwd=launch.cwd, preexec_fn=launch.preexec_fn, pass_fds=launch.pass_fds, start_new_session=True)\n"
        "import time; time.sleep(1); os._exit(0)\n"
    )
    mechanism("bwrap")
    parent = await asyncio.create_subprocess_exec(sys.executable, "-c", script)
    try:
        assert await _until(lambda: len(_marked(marker)) == 1, 60)
        await parent.wait()
        assert await _until(lambda: not _marked(marker), 5), _marked(marker)
    finally:
        for pid in _marked(marker):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
