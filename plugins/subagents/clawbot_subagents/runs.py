"""Sub-agents: a session hands one task to a run of its own that works in the background.

``sessions_spawn`` starts a sub-agent in a fresh session ``agent:<agent>:subagent:<run id>``
(the minimal system prompt, only AGENTS.md and TOOLS.md) and returns at once. At most
``agents.defaults.subagents.max_concurrent`` run at once, all agents together: a spawn past
that is refused (the model is told to wait for a result or stop one), never queued, so
nothing runs later than the model believes. A run ends done, failed, timed out (its
``timeout_s``, at most the configured one) or stopped (``/subagents stop``), and its result
is announced to the session that started it as a system event: a chat gets a turn in which
the model reports; a sub-agent that started its own waits for their results before it
answers. Nesting is limited by ``max_depth`` (1: a sub-agent spawns none, and is not even
offered ``sessions_spawn``), and a sub-agent's tools are those its agent's policy allows
that its parent had too: delegating never widens what may run.

A run ends with the process that started it. Each one running is written down
(:mod:`clawbot_subagents.record`), so the next ``clawbot run`` tells each parent chat
whose sub-agent a crash or a stop cut off (:mod:`clawbot_subagents.cut_off`).
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from datetime import UTC, datetime
from pathlib import Path

import attrs
from clawbot import AgentHost, CapabilityScope, InboundMessage, ServiceUnavailable, SubagentLimits, TurnTrust
from clawbot.safetext import fence

from clawbot_subagents.api import Subagents, SubagentSummary
from clawbot_subagents.record import CutOff, SubagentRecord
from clawbot_subagents.text import one_line, quoted_line

log = logging.getLogger(__name__)

SPAWN_TOOL = "sessions_spawn"
KEEP_FINISHED = 200  # finished runs /subagents still lists


def subagent_key(agent_id: str, run_id: str) -> str:
    return f"agent:{agent_id}:subagent:{run_id}"


def is_subagent_session(session_key: str) -> bool:
    return "subagent" in session_key.split(":")[2:]


@attrs.define(eq=False)
class SubagentRun:
    run_id: str
    session_key: str
    agent_id: str
    task: str
    parent_session_key: str
    depth: int
    started_at: str
    host: AgentHost
    parent_agent: str = ""
    parent_origin: InboundMessage | None = None
    trust: TurnTrust = TurnTrust.NON_OWNER
    """The trust of the turn that started it: its turns, and its report, carry no more."""
    status: str = "running"
    result: str = ""
    started: float = attrs.field(factory=time.monotonic)
    job: asyncio.Task[None] | None = None
    stop_asked: bool = False
    announce: bool = True
    """``False`` once the parent's chat was stopped or started over: its result is not wanted."""

    def summary(self) -> SubagentSummary:
        return SubagentSummary(self.run_id, self.session_key, self.agent_id, self.task, self.status, self.started_at, self.parent_session_key)


def announcement(run: SubagentRun) -> str:
    """What the parent's model reads when ``run`` ended: how, and its result (as data)."""
    seconds = time.monotonic() - run.started
    head = f"Sub-agent {run.run_id} (agent {run.agent_id}, session {run.session_key}) {run.status} after {seconds:.0f} s.\nTask: {one_line(run.task)}"
    if run.status == "done":
        body = fence(run.result or "(no text)", label=f"the result of sub-agent {run.run_id}")
        return f"{head}\n{body}\nTell the user what matters from it."
    why = f"\nWhy: {run.result}" if run.result else ""
    return f"{head}{why}\nTell the user it did not finish, and what that means for their request."


def cut_off_announcement(run: CutOff) -> str:
    """What the parent's model reads when clawbot stopped while ``run`` ran: its result is lost."""
    return (
        f"Sub-agent {run.run_id} (agent {run.agent_id}, session {run.session_key}) was interrupted: clawbot stopped while it ran, "
        f"and its result is lost.\nTask: {one_line(run.task)}\nTell the user it did not finish, and what that means for their request."
    )


@attrs.define(eq=False)
class SubagentRegistry:
    """The sub-agents of one running clawbot (they end with it; :attr:`record` keeps the
    running ones on disk). ``settings``: ``agents.defaults.subagents``."""

    state_dir: Path
    settings: SubagentLimits
    _runs: dict[str, SubagentRun] = attrs.field(factory=dict)
    #: sub-agent session -> results of its own sub-agents, waiting for its next turn
    _inbox: dict[str, asyncio.Queue[str]] = attrs.field(factory=dict)

    @property
    def record(self) -> SubagentRecord:
        """The runs on disk, for the next gateway to announce the ones it finds cut off."""
        return SubagentRecord(self.state_dir / "gateway" / "subagents.json")

    def for_scope(self, scope: CapabilityScope) -> Subagents:
        """The capability for one tool call: this registry as the calling session sees it."""
        return SessionSubagents(self, scope)

    def take_cut_off(self) -> list[CutOff]:
        """The runs an earlier process left running (it crashed or stopped), forgotten on disk."""
        try:
            return self.record.take_cut_off(frozenset(r.run_id for r in self.running()))
        except OSError as exc:
            log.warning("the sub-agents a restart cut off cannot be read (%s): they are not announced", exc)
            return []

    def _write_down(self, run: SubagentRun) -> None:
        try:
            self.record.started(run.run_id, run.agent_id, run.session_key, run.task, run.parent_session_key, run.parent_origin)
        except OSError as exc:
            log.warning("sub-agent %s is not written down (%s): a crash now would end it unannounced", run.run_id, exc)

    def _cross_off(self, run: SubagentRun) -> None:
        try:
            self.record.ended(run.run_id)
        except OSError as exc:
            log.warning("sub-agent %s could not be crossed off (%s): a restart may announce it as interrupted", run.run_id, exc)

    def depth_of(self, session_key: str) -> int:
        """0 for a session a person talks to; a sub-agent's is its parent's plus one."""
        run = self._by_session(session_key)
        if run is not None:
            return run.depth
        return session_key.split(":").count("subagent")  # one from before a restart: at least that deep

    def _by_session(self, session_key: str) -> SubagentRun | None:
        if not is_subagent_session(session_key):
            return None
        return self._runs.get(session_key.rsplit(":", 1)[-1])

    def running(self) -> list[SubagentRun]:
        return [r for r in self._runs.values() if r.status == "running"]

    def of_parent(self, parent_session_key: str) -> list[SubagentSummary]:
        """The runs ``parent_session_key`` started, newest first."""
        runs = [r for r in self._runs.values() if r.parent_session_key == parent_session_key]
        return [r.summary() for r in reversed(runs)]

    def stop(self, parent_session_key: str, run_id: str) -> str:
        run = self._runs.get(run_id)
        if run is None or run.parent_session_key != parent_session_key:
            return f"No sub-agent {quoted_line(run_id)} was started from this session. /subagents lists them."
        if run.status != "running" or run.job is None:
            return f"Sub-agent {run_id} is not running ({run.status})."
        run.stop_asked = True
        run.job.cancel()
        return f"Stopping sub-agent {run_id}; its session reports that it stopped."

    def stop_all(self, parent_session_key: str) -> int:
        """``/stop``, ``/new``: the session's running sub-agents end, unannounced (nobody
        wants their results in a chat that was stopped or started over); how many."""
        stopped = 0
        for run in self._runs.values():
            if run.parent_session_key == parent_session_key and run.status == "running" and run.job is not None:
                run.stop_asked, run.announce = True, False
                run.job.cancel()
                stopped += 1
        self._forget_old()
        return stopped

    def _forget_old(self) -> None:
        """Keep the newest finished runs only (``/subagents`` lists them), so a long-running
        gateway does not keep every run it ever started."""
        finished = [key for key, run in self._runs.items() if run.status != "running"]
        for key in finished[: max(0, len(finished) - KEEP_FINISHED)]:
            del self._runs[key]

    async def aclose(self) -> None:
        """clawbot stops: the runs end with it, left written down for the next gateway."""
        jobs = [run.job for run in self.running() if run.job is not None]
        for job in jobs:
            job.cancel()
        await asyncio.gather(*jobs, return_exceptions=True)

    def start(self, run: SubagentRun, tools: frozenset[str], model: str | None, timeout: float) -> None:
        self._forget_old()
        self._runs[run.run_id] = run
        self._write_down(run)
        run.job = asyncio.get_running_loop().create_task(self._run(run, tools, model, timeout), name=f"subagent:{run.run_id}")

    def new_run_id(self) -> str:
        run_id = secrets.token_hex(4)
        while run_id in self._runs:
            run_id = secrets.token_hex(4)
        return run_id

    async def _run(self, run: SubagentRun, tools: frozenset[str], model: str | None, timeout: float) -> None:
        host = run.host
        inbox = self._inbox.setdefault(run.session_key, asyncio.Queue())
        shutting_down = False

        async def turn(text: str, from_session: str | None = None) -> str:
            outcome = await host.run_turn(
                run.agent_id, run.session_key, text, kind="subagent", model=model, trust=run.trust, tools=tools, from_session=from_session
            )
            return outcome.text

        try:
            async with asyncio.timeout(timeout):
                result = await turn(run.task, from_session=run.parent_session_key)
                # Its own sub-agents report to it, and it answers only once they all did.
                while any(r.status == "running" for r in self._runs.values() if r.parent_session_key == run.session_key) or not inbox.empty():
                    result = await turn(await inbox.get())
            run.status, run.result = "done", result
        except TimeoutError:
            run.status, run.result = "timed out", f"it ran longer than its {timeout:g} s"
        except asyncio.CancelledError:
            run.status = "stopped"
            if not run.stop_asked:  # clawbot is shutting down: nobody is left to tell
                shutting_down = True
                raise
            run.result = "stopped with /subagents stop"
        except Exception as exc:
            log.warning("sub-agent %s failed", run.run_id, exc_info=True)
            first = str(exc).strip().splitlines()
            run.status = "failed"
            run.result = getattr(exc, "user_message", None) or (f"{type(exc).__name__}: {first[0]}" if first else type(exc).__name__)
        finally:
            self._inbox.pop(run.session_key, None)
            for child in self._runs.values():  # its own sub-agents end with it
                if child.parent_session_key == run.session_key and child.status == "running" and child.job is not None:
                    child.stop_asked = True
                    child.job.cancel()
            if not shutting_down:  # cut off by a stop: left written down, for the next gateway to announce
                self._cross_off(run)
                await self._ended(run)

    async def _ended(self, run: SubagentRun) -> None:
        host = run.host
        await host.end_session(run.session_key, f"sub-agent {run.status}")  # plugins see it end like any other
        if not run.announce:
            return
        text = announcement(run)
        if is_subagent_session(run.parent_session_key):
            parent = self._by_session(run.parent_session_key)
            if parent is not None and parent.status == "running":
                self._inbox.setdefault(parent.session_key, asyncio.Queue()).put_nowait(text)
            else:  # the sub-agent that started it is over: nobody waits for this result
                log.info("sub-agent %s ended after the sub-agent that started it", run.run_id)
            return
        if run.parent_origin is not None or not host.gateway_running:
            try:
                # answered as the chat's own turn, as every system event of a chat's tools is
                await host.post_system_event(run.parent_session_key, text, origin=run.parent_origin, kind="chat")
                return
            except ServiceUnavailable:
                if host.gateway_running:  # the parent's chat is not running: the gateway lists the report as gone nowhere
                    return
        # No chat to answer in (the parent was itself asked by another session): its model
        # still learns the result, and its reply stays in its history.
        try:
            await host.run_turn(run.parent_agent, run.parent_session_key, text, trust=run.trust)
        except Exception:
            log.exception("reporting sub-agent %s to %s failed", run.run_id, run.parent_session_key)


@attrs.define(eq=False)
class SessionSubagents(Subagents):
    """The :class:`Subagents` capability of one tool call's session."""

    registry: SubagentRegistry
    scope: CapabilityScope

    def started(self) -> list[SubagentSummary]:
        return self.registry.of_parent(self.scope.session_key)

    async def spawn(self, task: str, *, agent_id: str | None = None, model: str | None = None, timeout_s: float | None = None) -> SubagentSummary:
        scope, registry = self.scope, self.registry
        settings = registry.settings
        target = agent_id or scope.agent_id
        if model is not None and scope.trust is not TurnTrust.OWNER:  # as /model: the owner's choice
            raise ServiceUnavailable("only the owner's turns may pick a sub-agent's model; leave model out to use the agent's own")
        if not task.strip():
            raise ServiceUnavailable("the task is empty: say what the sub-agent should do")
        depth = registry.depth_of(scope.session_key) + 1
        if depth > settings.max_depth:
            raise ServiceUnavailable(
                f"sub-agents may nest only {settings.max_depth} level(s) deep (agents.defaults.subagents.max_depth); do this part yourself"
            )
        running = len(registry.running())
        if running >= settings.max_concurrent:
            raise ServiceUnavailable(
                f"{running} sub-agents are running already, the most allowed (agents.defaults.subagents.max_concurrent); "
                "nothing was started: wait for one to report back, or do it yourself"
            )
        if timeout_s is not None and timeout_s <= 0:
            raise ServiceUnavailable("timeout_s must be more than 0 seconds")
        timeout = min(float(timeout_s), settings.timeout_s) if timeout_s is not None else float(settings.timeout_s)
        host = scope.host
        if model and (problem := host.model_problem(model, target)) is not None:
            raise ServiceUnavailable(f"model {model!r}: {problem}")
        parent_tools = scope.tools if scope.tools is not None else host.agent_tool_names(scope.agent_id)
        tools = frozenset(parent_tools) & host.agent_tool_names(target)
        if depth >= settings.max_depth:  # at the limit it could only be refused: not offered
            tools -= {SPAWN_TOOL}
        run_id = registry.new_run_id()
        run = SubagentRun(
            run_id,
            subagent_key(target, run_id),
            target,
            task,
            scope.session_key,
            depth,
            datetime.now(UTC).isoformat(timespec="seconds"),
            host,
            parent_agent=scope.agent_id,
            parent_origin=scope.origin,
            trust=scope.trust,
        )
        registry.start(run, tools, model, timeout)
        if not is_subagent_session(scope.session_key):  # a one-shot run waits for its report
            host.expect_system_event(scope.session_key)
        return run.summary()
