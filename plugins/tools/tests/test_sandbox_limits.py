"""Resource limits hold in every mode, "off" included: memory, file size, core dumps, and
(for ordinary users; the kernel exempts root) the number of processes."""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import time
from pathlib import Path

import pytest
from clawbot_tools.runtime.sandbox import Limits, SandboxPolicy

from .sandbox_variants import ALL
from .sandbox_world import run_sandboxed


def policy_in(tmp_path: Path, **limits: object) -> SandboxPolicy:
    ws, temp = tmp_path / "ws", tmp_path / "tmp"
    ws.mkdir()
    temp.mkdir(mode=0o700)
    return SandboxPolicy(workspace=str(ws), temp_dir=str(temp), limits=Limits(**limits))


@pytest.mark.parametrize("name", ALL)
def test_tail_of_dev_zero_ends_quickly_with_an_error_under_the_default_limits(tmp_path: Path, name: str) -> None:
    done = run_sandboxed(name, "tail /dev/zero", policy_in(tmp_path), timeout=120)  # unlimited, it would run until killed
    assert done.returncode != 0
    assert "memory exhausted" in done.stdout


@pytest.mark.parametrize("name", ALL)
def test_a_file_cannot_grow_past_the_file_size_limit(tmp_path: Path, name: str) -> None:
    policy = policy_in(tmp_path, file_size_mb=1)
    done = run_sandboxed(name, "head -c 3000000 /dev/zero > big", policy)
    assert done.returncode != 0
    assert os.path.getsize(Path(policy.workspace) / "big") <= 1024 * 1024


@pytest.mark.parametrize("name", ALL)
def test_limits_cannot_be_raised_again_and_core_dumps_are_off(tmp_path: Path, name: str) -> None:
    done = run_sandboxed(name, "ulimit -c; ulimit -d; ulimit -d unlimited && echo raised", policy_in(tmp_path, memory_mb=512))
    assert done.stdout.splitlines()[:2] == ["0", str(512 * 1024)]
    assert "raised" not in done.stdout


# A bounded loop (60 forks), never an open-ended fork bomb: if the limit failed it would
# still end, and the process group is killed afterwards either way.
FORK_LOOP = """/usr/bin/python3 -c '
import os, time
started = 0
for _ in range(60):
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        os.close(1); os.close(2); time.sleep(30); os._exit(0)
    started += 1
print("started", started)
'"""
USERS = {"off": 4241, "bwrap": 4242, "landlock": 4243, "landlock-without-namespaces": 4244}  # one each: the limit counts the user's processes


def _processes_of(uid: int) -> int:
    count = 0
    for entry in Path("/proc").iterdir():
        with contextlib.suppress(OSError):
            if entry.name.isdigit() and entry.stat().st_uid == uid:
                count += 1
    return count


@pytest.mark.skipif(os.geteuid() != 0, reason="running the command as an ordinary user needs root")
@pytest.mark.parametrize("name", ALL)
def test_the_process_limit_bounds_a_fork_loop_of_an_ordinary_user(name: str) -> None:
    uid = USERS[name]
    base = Path(tempfile.mkdtemp(prefix="clawbot-nproc-"))  # pytest's tmp_path is root's alone (0700)
    base.chmod(0o755)
    policy = policy_in(base, processes=20)
    for folder in (Path(policy.workspace), Path(policy.temp_dir)):
        shutil.chown(folder, uid, uid)
    try:
        done = run_sandboxed(name, FORK_LOOP, policy, as_user=uid, timeout=30)
    finally:
        deadline = time.monotonic() + 60
        while _processes_of(uid) and time.monotonic() < deadline:
            time.sleep(0.05)  # killed children are released asynchronously; the next test counts them
        shutil.rmtree(base)
    assert done.stdout.startswith("started "), done.stdout
    assert 0 < int(done.stdout.split()[1]) < 20, done.stdout


def test_under_bwrap_no_file_outside_the_workspace_can_hold_memory(tmp_path: Path) -> None:
    """bwrap builds the new root, /dev and the covers of protected folders in memory (tmpfs):
    they are read-only once built, and /dev/shm (shared memory for semaphores) is small."""
    policy = policy_in(tmp_path)
    line = (
        "for target in /fill /dev/fill /usr/fill; do { echo x > $target; } 2>/dev/null && echo wrote $target; done; "
        "head -c 100000000 /dev/zero > /dev/shm/fill 2>/dev/null; wc -c < /dev/shm/fill; "
        "{ echo h > /proc/sysrq-trigger; } 2>/dev/null && echo sysrq; { echo 5 > /proc/sys/kernel/printk_ratelimit; } 2>/dev/null && echo sysctl; "
        "echo ok > $TMPDIR/t && cat $TMPDIR/t"
    )
    done = run_sandboxed("bwrap", line, policy)
    lines = done.stdout.split()
    assert "wrote" not in lines and "sysrq" not in lines and "sysctl" not in lines, done.stdout
    assert int(lines[0]) <= 64 * 1024 * 1024, done.stdout  # shared memory stopped at its cap
    assert lines[-1] == "ok"  # the temp dir stays writable
