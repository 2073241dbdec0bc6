"""The processes ``exec`` started: running, backgrounded, or finished a little while ago.

One registry per plugin instance (created when the kernel asks the plugin for its tools),
so two kernels in one Python process never see each other's processes. Every command runs
as ``/bin/sh -c COMMAND`` inside what the sandbox made of it (a :class:`Launch`: the argv,
environment and the step the child takes before it runs), in a new session, i.e. its own
process group: a timeout, a ``process kill`` or the kernel shutting down signals the whole
group (SIGTERM, then SIGKILL after a grace period), so the grandchildren a command left
behind die with it. A command the user approved gets ``/dev/null`` as its input unless the
approval made it interactive (``ManagedProcess.interactive``).

stdout and stderr are merged into one stream (their order is kept) in a bounded buffer.
A process belongs to the session that started it; others cannot see it. A session may
have at most ``max_per_session`` live commands (``[plugins.tools.exec] max_processes``,
counting finished ones whose background children still run): one more is refused with
:class:`TooManyProcesses`. This bounds the commands ``exec`` starts, not what one command
starts inside its own process group (its timeout bounds that).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import secrets
import signal
import subprocess
import time
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any

from clawbot import TurnTrust

from clawbot_tools.runtime.outbuf import OutputBuffer

if TYPE_CHECKING:
    from clawbot_tools.runtime.sandbox import Launch

log = logging.getLogger(__name__)

KILL_GRACE_S = 2.0
DRAIN_S = 0.5  # after the shell exits, how long its output may still arrive before "finished"
READ_CHUNK = 64 * 1024
MAX_FINISHED = 30
MAX_PER_SESSION = 8


class TooManyProcesses(RuntimeError):
    """The session already has as many live commands as it may have; ``str(exc)`` says so."""


class ManagedProcess:
    """One command: its process group, output, status and the session it belongs to."""

    def __init__(
        self,
        process_id: str,
        command: str,
        *,
        session_key: str,
        agent_id: str,
        cwd: str,
        timeout_s: float,
        approved: bool = False,
        interactive: bool = True,
        trust: TurnTrust = TurnTrust.OWNER,
    ) -> None:
        self.id = process_id
        self.approved = approved  # run after the user's /approve: writing to it asks again
        self.interactive = interactive  # stdin is a pipe (else /dev/null)
        self.trust = trust  # the turn that started it: a less trusted turn may watch it, not steer it
        self.command = command
        self.session_key = session_key
        self.agent_id = agent_id
        self.cwd = cwd
        self.timeout_s = timeout_s
        self.started = time.monotonic()
        self.ended: float | None = None
        self.status = "running"  # running | exited | killed | timed-out
        self.exit_code: int | None = None
        self.output = OutputBuffer()
        self.poll_position = 0
        self.backgrounded = False
        self.reported = False  # the model has seen how it ended (poll/log after it finished)
        self.awaited = 0  # polls now waiting for the end
        self.lingering = False  # the shell exited but children still hold its output open
        self._proc: asyncio.subprocess.Process | None = None
        self._transport: asyncio.SubprocessTransport | None = None
        self._stop_reason: str | None = None
        self._exited = asyncio.Event()  # the shell itself exited
        self._finished = asyncio.Event()
        self._closed = asyncio.Event()  # output fully read (every member of the group is gone)
        self._tasks: list[asyncio.Task[None]] = []

    # --- lifecycle ------------------------------------------------------------------

    async def _start(self, launch: Launch) -> None:
        # Not asyncio.create_subprocess_exec: its Process.wait() also waits for the pipes to
        # close, which a background grandchild holding stdout delays until it exits. The
        # protocol below reports the shell's own exit.
        loop = asyncio.get_running_loop()
        try:
            transport, protocol = await loop.subprocess_exec(
                lambda: _Protocol(self._exited, loop),
                *launch.argv,
                cwd=launch.cwd,
                env=launch.env,
                stdin=asyncio.subprocess.PIPE if self.interactive else asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.STDOUT,
                start_new_session=True,
                preexec_fn=launch.preexec_fn,
                pass_fds=launch.pass_fds,
            )
        except subprocess.SubprocessError as exc:  # the child could not be confined: it did not run
            raise subprocess.SubprocessError(f"the sandbox could not be set up ({launch.explain() or exc})") from exc
        finally:
            launch.close()
        self._proc = asyncio.subprocess.Process(transport, protocol, loop)
        self._transport = transport
        reader = asyncio.create_task(self._read(), name=f"exec:{self.id}:read")
        self._tasks = [reader, asyncio.create_task(self._watch(reader), name=f"exec:{self.id}:watch")]

    async def _read(self) -> None:
        assert self._proc is not None and self._proc.stdout is not None
        try:
            while chunk := await self._proc.stdout.read(READ_CHUNK):
                self.output.append(chunk)
        finally:
            self._closed.set()

    async def _watch(self, reader: asyncio.Task[None]) -> None:
        assert self._proc is not None
        try:
            async with asyncio.timeout(self.timeout_s):
                await self._exited.wait()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(asyncio.shield(reader), DRAIN_S)
                self._finish()
                await asyncio.shield(reader)  # children still writing: the timeout applies to them too
        except TimeoutError:
            self._stop_reason = self._stop_reason or "timed-out"
            await self._kill_group()
            self._finish()
        if self._closed.is_set() and self._transport is not None:
            self._transport.close()  # everything exited and the output is read: release the pipes

    def _finish(self) -> None:
        if self._finished.is_set():
            return
        assert self._proc is not None
        self.exit_code = self._proc.returncode
        self.status = self._stop_reason or "exited"
        self.ended = time.monotonic()
        self.lingering = not self._closed.is_set()
        self._finished.set()

    async def _kill_group(self) -> None:
        """SIGTERM to the group, SIGKILL to whatever is left after the grace period."""
        assert self._proc is not None
        pgid = self._proc.pid  # start_new_session: the shell leads its own group
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, signal.SIGTERM)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._exited.wait(), KILL_GRACE_S)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._closed.wait(), 0.2)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, signal.SIGKILL)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._exited.wait(), KILL_GRACE_S)

    # --- what tools ask ---------------------------------------------------------------

    @property
    def running(self) -> bool:
        return not self._finished.is_set()

    @property
    def group_alive(self) -> bool:
        return self.running or not self._closed.is_set()

    async def wait(self, timeout_s: float | None) -> bool:
        """Wait up to ``timeout_s`` for the command to finish; whether it has."""
        if timeout_s is not None and timeout_s <= 0:
            return not self.running
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._finished.wait(), timeout_s)
        return not self.running

    def runtime_s(self) -> float:
        return (self.ended or time.monotonic()) - self.started

    def describe_status(self) -> str:
        if self.running:
            return "running"
        code = self.exit_code
        if self.status == "timed-out":
            text = f"killed after the {self.timeout_s:g} s timeout"
        elif self.status == "killed":
            text = "killed"
        elif code is not None and code < 0:
            text = f"killed by signal {_signal_name(-code)}"
        else:
            text = f"exit code {code}"
        if self.lingering and self.group_alive:
            text += "; processes it started in the background are still running"
        return text

    async def write(self, data: str, *, eof: bool) -> None:
        """Send ``data`` to stdin (and close it if ``eof``); ``OSError`` when it is closed."""
        assert self._proc is not None
        stdin = self._proc.stdin
        if stdin is None:
            raise BrokenPipeError("its input is /dev/null (it was approved without interactive input)")
        if stdin.is_closing():
            raise BrokenPipeError("stdin is closed")
        if data:
            stdin.write(data.encode("utf-8"))
            await stdin.drain()
        if eof:
            stdin.close()

    async def kill(self) -> None:
        """Stop the whole process group (also its leftover children once it finished)."""
        if self.running:
            self._stop_reason = "killed"
        if self.group_alive:
            await self._kill_group()
        await self.wait(KILL_GRACE_S)

    async def aclose(self) -> None:
        if self.group_alive:
            self._stop_reason = self._stop_reason or "killed"
            await self._kill_group()
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        if self._exited.is_set():
            self._finish()  # the watcher may have been cancelled before it recorded the end
        if self._transport is not None:
            self._transport.close()


class _Protocol(asyncio.subprocess.SubprocessStreamProtocol):
    def __init__(self, exited: asyncio.Event, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(limit=READ_CHUNK, loop=loop)
        self._exited_event = exited

    def process_exited(self) -> None:
        super().process_exited()
        self._exited_event.set()


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return str(number)


class ProcessRegistry:
    """Processes by id (``p-1a2b``), with a bounded memory of finished ones."""

    def __init__(self, max_finished: int = MAX_FINISHED, max_per_session: int = MAX_PER_SESSION) -> None:
        self._items: dict[str, ManagedProcess] = {}
        self._max_finished = max_finished
        self._max_per_session = max_per_session
        self._starting: dict[str, int] = {}  # session -> starts under way (counted against the cap)
        self._tasks: set[asyncio.Task[Any]] = set()
        self._closed = False

    async def start(
        self,
        command: str,
        prepare: Callable[[], Launch],
        *,
        timeout_s: float,
        session_key: str,
        agent_id: str,
        approved: bool = False,
        interactive: bool = True,
        trust: TurnTrust = TurnTrust.OWNER,
    ) -> ManagedProcess:
        """Start ``command`` as ``prepare()`` (called once the cap allows it) wraps it for the
        sandbox. Raises ``TooManyProcesses`` over the cap; whatever ``prepare`` raises; and
        ``OSError`` or ``subprocess.SubprocessError`` when the child cannot start."""
        if self._closed:
            raise RuntimeError("clawbot is shutting down")
        live = self.live(session_key)
        if len(live) + self._starting.get(session_key, 0) >= self._max_per_session:
            shown = ", ".join(p.id for p in live) or "starting"
            raise TooManyProcesses(
                f"this session already has {self._max_per_session} commands running or starting ({shown}), the limit "
                "([plugins.tools.exec] max_processes). Wait for one to finish (process poll with wait_ms) or stop one "
                "(process kill), then try again"
            )
        launch = prepare()
        process = ManagedProcess(
            self._new_id(),
            command,
            session_key=session_key,
            agent_id=agent_id,
            cwd=launch.cwd,
            timeout_s=timeout_s,
            approved=approved,
            interactive=interactive,
            trust=trust,
        )
        self._starting[session_key] = self._starting.get(session_key, 0) + 1
        try:
            await process._start(launch)
        finally:
            self._starting[session_key] -= 1
            if not self._starting[session_key]:
                del self._starting[session_key]
        self._items[process.id] = process
        self._prune()
        log.debug("exec %s started in %s", process.id, launch.cwd)
        return process

    def _new_id(self) -> str:
        while True:
            candidate = f"p-{secrets.token_hex(2)}"
            if candidate not in self._items:
                return candidate

    def get(self, process_id: str, session_key: str) -> ManagedProcess | None:
        process = self._items.get(process_id)
        return process if process is not None and process.session_key == session_key else None

    def list(self, session_key: str) -> list[ManagedProcess]:
        return [p for p in self._items.values() if p.session_key == session_key]

    def live(self, session_key: str) -> list[ManagedProcess]:
        """The session's processes whose group still has members (running or left behind)."""
        return [p for p in self._items.values() if p.session_key == session_key and p.group_alive]

    def live_of_agent(self, agent_id: str) -> list[ManagedProcess]:
        """The agent's processes, in every session, whose group still has members."""
        return [p for p in self._items.values() if p.agent_id == agent_id and p.group_alive]

    def forget(self, process_id: str) -> None:
        self._items.pop(process_id, None)

    def spawn(self, coroutine: Coroutine[Any, Any, Any], name: str) -> asyncio.Task[Any]:
        """Run background work tied to the registry (cancelled when it closes)."""
        task = asyncio.get_running_loop().create_task(coroutine, name=name)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    def _prune(self) -> None:
        finished = [p for p in self._items.values() if not p.group_alive]
        for process in finished[: max(0, len(finished) - self._max_finished)]:
            del self._items[process.id]

    async def aclose(self) -> None:
        """Kill every process group still alive (kernel shutdown)."""
        self._closed = True
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await asyncio.gather(*(p.aclose() for p in self._items.values()), return_exceptions=True)
