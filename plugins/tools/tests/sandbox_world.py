"""The world the escape payloads run in, the listeners they aim at, and the evidence they leave.

:class:`World` lays out a fake home and state dir with canaries, a workspace with planted
symlinks, a folder beside it, and listeners (TCP on 127.0.0.1 and ::1, UDP, Unix stream and
datagram sockets outside the workspace). :class:`Driver` is a separate process standing in
for clawbot (its environment holds a canary). ``World.evidence`` says what a run reached.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from .sandbox_payloads import Payload
from .sandbox_variants import CONFINING, find

HERE = Path(__file__).parent
PYTHON = "/usr/bin/python3"
MECHANISMS = CONFINING
PATH = "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin"
SYSCTL = Path("/proc/sys/kernel/printk_ratelimit")
#: the sysctl is one for the whole machine, and the suite runs in several processes
SYSCTL_LOCK = Path("/tmp/clawbot-tests-host-sysctl.lock")


@contextlib.contextmanager
def host_settings(payload: Payload):  # noqa: ANN201 - a context manager
    """Hold the machine's sysctl for one payload's run: alone for a payload that writes it,
    shared with the other payloads otherwise (their evidence reads it; another process's
    write in between would look like theirs, and a restore would undo another's write)."""
    import fcntl

    exclusive = "{sysctl}" in payload.line
    with SYSCTL_LOCK.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def usable(name: str) -> None:
    """Skip (naming what is missing) when ``name`` cannot run on this machine."""
    mechanism, problem = find(name)
    if mechanism is None:
        pytest.skip(f"the {name} sandbox is not usable here: {problem}")


def ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as probe_socket:
            probe_socket.bind(("::1", 0))
        return True
    except OSError:
        return False


def missing(payload: Payload) -> str | None:
    for need in payload.needs:
        if need == "ipv6":
            if not ipv6_loopback():
                return "no ::1 on this machine"
        elif not (os.path.exists(need) if need.startswith("/") else shutil.which(need, path=PATH)):
            return f"{need} is not installed"
    if payload.control_as_root and os.geteuid() != 0:
        return "the unconfined control of this line needs root"
    return None


class Listeners:
    """Sockets that count what reached them. Nothing serves them in the background: a
    connection waits in the accept queue and a datagram in the buffer once the sender's call
    returned, so :meth:`drain` (run after the command ended) sees everything that arrived."""

    def __init__(self, folder: Path) -> None:
        self.hits = {"tcp": 0, "tcp6": 0, "udp": 0, "unix": 0, "unix_dgram": 0}
        self._sockets: list[tuple[str, socket.socket]] = []
        self.ports: dict[str, object] = {"tcp6": 9}
        self._listen("tcp", socket.AF_INET, socket.SOCK_STREAM, ("127.0.0.1", 0))
        if ipv6_loopback():
            self._listen("tcp6", socket.AF_INET6, socket.SOCK_STREAM, ("::1", 0))
        self._listen("udp", socket.AF_INET, socket.SOCK_DGRAM, ("127.0.0.1", 0))
        folder.mkdir(mode=0o711)
        self._listen("unix", socket.AF_UNIX, socket.SOCK_STREAM, str(folder / "bus"))
        self._listen("unix_dgram", socket.AF_UNIX, socket.SOCK_DGRAM, str(folder / "journal"))

    def _listen(self, kind: str, family: int, type_: int, address: object) -> None:
        sock = socket.socket(family, type_)
        sock.bind(address)
        if type_ == socket.SOCK_STREAM:
            sock.listen(64)
        sock.setblocking(False)
        self._sockets.append((kind, sock))
        self.ports[kind] = sock.getsockname() if family == socket.AF_UNIX else sock.getsockname()[1]

    def drain(self) -> dict[str, int]:
        """Count what arrived since the last call; the counts so far."""
        for kind, sock in self._sockets:
            while True:
                try:
                    if sock.type == socket.SOCK_STREAM:
                        sock.accept()[0].close()
                    else:
                        sock.recv(4096)
                except (BlockingIOError, InterruptedError):
                    break
                self.hits[kind] += 1
        return dict(self.hits)

    def close(self) -> None:
        for _kind, sock in self._sockets:
            sock.close()


class Driver:
    """The stand-in for clawbot: a process whose environment holds :attr:`canary`."""

    def __init__(self) -> None:
        self.canary = "ENVIRON-" + secrets.token_hex(8)
        self.keyring_canary = "KEYRING-" + secrets.token_hex(8)
        self.sysv_canary = "SYSV-" + secrets.token_hex(8)
        env = {
            "PATH": PATH,
            "CLAWBOT_TEST_API_KEY": self.canary,
            "CLAWBOT_TEST_KEYRING": self.keyring_canary,
            "CLAWBOT_TEST_SYSV": self.sysv_canary,
        }
        self.process = subprocess.Popen(
            [sys.executable, str(HERE / "sandbox_driver.py")],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
            text=True,
        )

    @property
    def pid(self) -> int:
        return self.process.pid

    def run(self, request: dict) -> dict:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError("the driver died")
        return json.loads(line)

    def close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        self.process.wait(10)


class World:
    def __init__(self, base: Path, driver: Driver, listeners: Listeners) -> None:
        self.base = base
        self.driver = driver
        self.listeners = listeners
        self.token = secrets.token_hex(6)
        self.home, self.state, self.ws = base / "home", base / "state", base / "ws"
        self.outside, self.temp = base / "outside", base / "tmp"
        self.secrets = {name: f"{name}-{secrets.token_hex(8)}" for name in ("ssh", "bashrc", "credentials", "approvals", "session")}
        self.secrets["environ"] = driver.canary
        self.secrets["keyring"] = driver.keyring_canary
        self.secrets["sysv"] = driver.sysv_canary
        self.host_files = tuple(Path(folder, f"clawbot-escape-{self.token}") for folder in ("/tmp", "/var/tmp", "/etc"))
        # A harmless host kernel setting: as root, a write to it would change the host
        # (core_pattern, next to it, would run a program as root outside any sandbox).
        self.sysctl_value = SYSCTL.read_text().strip() if SYSCTL.exists() else "5"

    def values(self) -> dict[str, object]:
        ports = self.listeners.ports
        return {
            "home": self.home,
            "state": self.state,
            "ws": self.ws,
            "outside": self.outside,
            "token": self.token,
            "tcp_port": ports["tcp"],
            "tcp6_port": ports["tcp6"],
            "udp_port": ports["udp"],
            "unix_path": ports["unix"],
            "unix_dgram_path": ports["unix_dgram"],
            "parent_pid": self.driver.pid,
            "python": PYTHON,
            "sysctl": SYSCTL,
            "sysctl_new": int(self.sysctl_value) + 3,
            "keyctl": {"x86_64": 250, "aarch64": 219}.get(os.uname().machine, 250),
        }

    def line(self, payload: Payload) -> str:
        return payload.line.format(**self.values())

    def reset(self) -> None:
        """Everything as it was before any payload ran."""
        for folder in (self.home, self.state, self.ws, self.outside, self.temp):
            shutil.rmtree(folder, ignore_errors=True)
        for path in self.host_files:
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
        self._restore_sysctl()
        (self.home / ".ssh").mkdir(parents=True)
        (self.home / ".ssh" / "id_rsa").write_text(f"-----BEGIN OPENSSH PRIVATE KEY-----\n{self.secrets['ssh']}\n")
        (self.home / ".bashrc").write_text(f"# {self.secrets['bashrc']}\n")
        (self.state / "credentials").mkdir(parents=True, mode=0o700)
        (self.state / "credentials" / "openai.json").write_text(json.dumps({"api_key": self.secrets["credentials"], "note": "PRIVATE"}))
        (self.state / "exec-approvals.json").write_text(json.dumps({"agents": {"main": [self.secrets["approvals"]]}}))
        (self.state / "sessions" / "main").mkdir(parents=True)
        (self.state / "sessions" / "main" / "s1.jsonl").write_text(json.dumps({"text": self.secrets["session"]}) + "\n")
        self.ws.mkdir()
        self.outside.mkdir()
        self.temp.mkdir(mode=0o700)
        (self.ws / "planted-key").symlink_to(self.home / ".ssh" / "id_rsa")
        (self.ws / "planted-out").symlink_to(self.outside)

    def cleanup(self) -> None:
        for path in self.host_files:
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
        self._restore_sysctl()

    def _restore_sysctl(self) -> None:
        with contextlib.suppress(OSError):
            if SYSCTL.read_text().strip() != self.sysctl_value:
                SYSCTL.write_text(self.sysctl_value)

    def request(self, mechanism: str, line: str, *, shell: str = "/bin/sh", settle_s: float = 0.0, timeout: float = 20, **policy: object) -> dict:
        policy.setdefault("protected", [str(self.home), str(self.state)])
        policy = {"workspace": str(self.ws), "temp_dir": str(self.temp), **policy}
        env = {"PATH": PATH, "HOME": str(self.home), "LANG": "C.UTF-8"}
        return {
            "mechanism": mechanism,
            "argv": [shutil.which(shell, path=PATH) or shell, "-c", line],
            "env": env,
            "cwd": str(self.ws),
            "policy": policy,
            "timeout": timeout,
            "settle": settle_s,
        }

    # --- evidence ----------------------------------------------------------------------

    def snapshot(self) -> dict[str, object]:
        files = {}
        for folder in (self.home, self.state, self.outside):
            for path in folder.rglob("*"):
                if path.is_file() and not path.is_symlink():
                    files[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
        for path in self.host_files:
            if path.exists():
                files[str(path)] = "exists"
        with contextlib.suppress(OSError):
            files[str(SYSCTL)] = SYSCTL.read_text().strip()
        return {"files": files, "hits": self.listeners.drain()}

    def copied_secrets(self) -> list[str]:
        """Secrets found in files of the workspace or temp dir (a payload copied them in)."""
        found = []
        for folder in (self.ws, self.temp):
            for path in folder.rglob("*"):
                with contextlib.suppress(OSError):
                    if path.is_file() and not path.is_symlink():
                        text = path.read_text(errors="replace")
                        found += [name for name, value in self.secrets.items() if value in text]
        return found

    def evidence(self, before: dict[str, object], answer: dict) -> dict[str, object]:
        """What the run reached, by kind (empty: nothing)."""
        after = self.snapshot()
        reached: dict[str, object] = {}
        read = [name for name, value in self.secrets.items() if value in answer["output"]] + self.copied_secrets()
        if read:
            reached["canary"] = sorted(set(read))
        changed = sorted(path for path in set(before["files"]) | set(after["files"]) if before["files"].get(path) != after["files"].get(path))
        if changed:
            reached["write"] = changed
        for kind, count in after["hits"].items():
            if count != before["hits"][kind]:
                reached[kind] = count - before["hits"][kind]
        if answer["signalled"]:
            reached["signal"] = answer["signalled"]
        return reached


def mechanism(name: str):
    """The mechanism ``name`` ("off" included); skips when it is not usable here."""
    usable(name)
    return find(name)[0]


def run_sandboxed(
    name: str,
    line: str,
    policy,
    *,
    env: dict[str, str] | None = None,
    cwd: str | None = None,
    timeout: float = 30,
    stdin: str | None = None,
    shell: str = "/bin/sh",
    as_user: int | None = None,
) -> subprocess.CompletedProcess:
    """``shell -c line`` under mechanism ``name`` as exec starts commands (new session); output merged.

    ``as_user``: run as that uid/gid, as if clawbot ran as that ordinary user (root only).
    """
    env = env if env is not None else {"PATH": PATH, "HOME": "/nonexistent", "LANG": "C.UTF-8"}
    chosen = mechanism(name)
    if as_user is not None:
        chosen = reachable_by_anyone(chosen)
    launch = chosen.prepare([shell, "-c", line], env=env, cwd=cwd or policy.workspace, policy=policy)
    preexec, user = launch.preexec_fn, {}
    if as_user is not None:
        user = {"user": as_user, "group": as_user, "extra_groups": []}
        preexec = _as_if_always(as_user, launch.preexec_fn)
    try:
        child = subprocess.Popen(
            launch.argv,
            env=launch.env,
            cwd=launch.cwd,
            preexec_fn=preexec,
            pass_fds=launch.pass_fds,
            start_new_session=True,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            **user,
        )
    except subprocess.SubprocessError as exc:
        raise RuntimeError(f"the sandbox refused to start the command: {launch.explain()}") from exc
    finally:
        launch.close()
    try:
        output, _ = child.communicate(stdin, timeout=timeout)
    finally:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(child.pid, 9)
        child.wait()
    return subprocess.CompletedProcess(launch.argv, child.returncode, output, "")


def reachable_by_anyone(chosen):
    """``chosen`` with its own program copied where every user can run it.

    bwrap ships inside the virtual environment, which lies under the checkout: in a folder
    only its owner may enter (a home directory is 0700), another user cannot start it.
    """
    program = getattr(chosen, "bwrap", None)
    return chosen if program is None else type(chosen)(_copy_for_anyone(program))


@functools.cache
def _copy_for_anyone(program: str) -> str:
    """A copy of the bundled ``program`` in a 0755 folder, once per test process, keeping the
    layout the binary finds its libraries by (``$ORIGIN/../../<package>.libs``)."""
    package = Path(program).parents[1]
    copy = Path(tempfile.mkdtemp(prefix="clawbot-bwrap-"))
    copy.chmod(0o755)
    shutil.copytree(package / "_bin", copy / package.name / "_bin")
    libs = package.parent / f"{package.name}.libs"
    if libs.is_dir():
        shutil.copytree(libs, copy / libs.name)
    for folder in (copy / package.name, copy / package.name / "_bin", copy / libs.name):
        with contextlib.suppress(FileNotFoundError):
            folder.chmod(0o755)
    return str(copy / package.name / "_bin" / Path(program).name)


def _as_if_always(uid: int, preexec):
    """Popen switched the child from root to ``uid``, which makes it non-dumpable (its /proc
    files stay root's); a process that always ran as that user is dumpable: restore that."""
    import ctypes

    prctl = ctypes.CDLL(None, use_errno=True).prctl

    def run() -> None:
        prctl(4, 1, 0, 0, 0)  # PR_SET_DUMPABLE
        if preexec is not None:
            preexec()

    return run
