"""A stand-in for clawbot in the sandbox tests: a separate process that starts sandboxed commands.

Run as ``python sandbox_driver.py``. Its environment holds a canary (as clawbot's holds API
keys), it records the signals it receives, and it reads one JSON request per line on stdin:
``{"mechanism", "argv", "env", "cwd", "policy", "timeout", "settle"}``; it answers one JSON
line: ``{"output", "code", "signalled", "refused"}``. ``refused`` is the sandbox's error
(SandboxError from prepare, or the child's explanation when Popen raised).
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import platform
import signal
import subprocess
import sys
import time

from clawbot_tools.runtime.sandbox import Limits, SandboxError, SandboxPolicy
from sandbox_variants import find  # beside this script

signalled: list[int] = []
KEYCTL = {"x86_64": 250, "aarch64": 219}
ADD_KEY = {"x86_64": 248, "aarch64": 217}


def _record(number: int, _frame: object) -> None:
    signalled.append(number)


def mechanism(name: str):
    found, problem = find(name)
    if found is None:
        raise SystemExit(f"{name} is not usable: {problem}")
    return found


def run(request: dict) -> dict:
    policy_fields = dict(request["policy"])
    policy_fields["limits"] = Limits(**policy_fields.pop("limits", {}))
    policy = SandboxPolicy(**policy_fields)
    signalled.clear()
    try:
        launch = mechanism(request["mechanism"]).prepare(request["argv"], env=request["env"], cwd=request["cwd"], policy=policy)
    except SandboxError as exc:
        return {"output": "", "code": None, "signalled": [], "refused": str(exc)}
    try:
        child = subprocess.Popen(
            launch.argv,
            env=launch.env,
            cwd=launch.cwd,
            preexec_fn=launch.preexec_fn,
            pass_fds=launch.pass_fds,
            start_new_session=True,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
    except subprocess.SubprocessError as exc:
        reason = launch.explain() or str(exc)
        launch.close()
        return {"output": "", "code": None, "signalled": [], "refused": reason}
    launch.close()
    try:
        output, _ = child.communicate(timeout=request["timeout"])
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(child.pid, signal.SIGKILL)
        output, _ = child.communicate()
    time.sleep(request.get("settle", 0))
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(child.pid, signal.SIGKILL)
    return {"output": output.decode(errors="replace"), "code": child.returncode, "signalled": list(signalled), "refused": None}


def hold_secrets() -> int:
    """Secrets a process of the user holds outside its files and environment: a key in its
    session keyring (as Kerberos keeps tickets) and a System V shared memory segment (as X11
    keeps window images). Returns the segment's id, removed at the end."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype, libc.shmat.restype = ctypes.c_long, ctypes.c_void_p
    keyctl, add_key = KEYCTL[platform.machine()], ADD_KEY[platform.machine()]
    libc.syscall(keyctl, 1, None)  # KEYCTL_JOIN_SESSION_KEYRING: a new one, this test's own
    key = os.environ["CLAWBOT_TEST_KEYRING"].encode()
    if libc.syscall(add_key, b"user", b"clawbot-canary", key, len(key), -3) < 0:  # KEY_SPEC_SESSION_KEYRING
        raise OSError(ctypes.get_errno(), "add_key")
    segment = libc.shmget(0, 4096, 0o1000 | 0o600)  # IPC_PRIVATE, IPC_CREAT
    address = libc.shmat(segment, None, 0)
    if segment < 0 or address in (None, ctypes.c_void_p(-1).value):
        raise OSError(ctypes.get_errno(), "shmget/shmat")
    ctypes.memmove(address, os.environ["CLAWBOT_TEST_SYSV"].encode(), len(os.environ["CLAWBOT_TEST_SYSV"]))
    return segment


def main() -> None:
    for number in (signal.SIGUSR1, signal.SIGUSR2, signal.SIGTERM, signal.SIGHUP):
        signal.signal(number, _record)
    segment = hold_secrets()
    try:
        for line in sys.stdin:
            answer = run(json.loads(line))
            sys.stdout.write(json.dumps(answer) + "\n")
            sys.stdout.flush()
    finally:
        ctypes.CDLL(None).shmctl(segment, 0, None)  # IPC_RMID


if __name__ == "__main__":
    main()
