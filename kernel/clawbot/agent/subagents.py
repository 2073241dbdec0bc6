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
(:mod:`clawbot.agent.subagent_record`), so the next ``clawbot run`` tells each parent chat
whose sub-agent a crash or a stop cut off, as a system event (:func:`cut_off_announcement`);
a parent with no chat to tell is logged and shown by ``clawbot status``.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING

import attrs

from clawbot.agent.subagent_record import CutOff, SubagentRecord
from clawbot.sessions.keys import session_kind
from clawbot.sessions.store import agent_of
from clawbot.types import InboundMessage, Message, Role, ServiceUnavailable, SessionEvent, SubagentSummary, TextBlock, TurnTrust

if TYPE_CHECKING:
    from clawbot.agent.conversation import Conversation
    from clawbot.agent.services import SharedServices

log = logging.getLogger(__name__)

SPAWN_TOOL = "sessions_spawn"
TASK_SHOWN = 120  # characters of a task that /subagents and announcements show
KEEP_FINISHED = 200  # finished runs /subagents still lists


@attrs.define(eq=False)
class SubagentRun:
    run_id: str
    session_key: str
    agent_id: str
    task: str
    parent_session_key: str
    depth: int
    started_at: str
    parent_origin: InboundMessage | None = None
    trust: TurnTrust = TurnTrust.NON_OWNER
    """The trust of the turn that started it: its turns, and its report, carry no more."""
    status: str = "running"
    result: str = ""
    started: float = attrs.field(factory=time.monotonic)
    job: asyncio.Task[object] | None = None
    stop_asked: bool = False
    announce: bool = True
    """``False`` once the parent's chat was stopped or started over: its result is not wanted."""

    def summary(self) -> SubagentSummary:
        return SubagentSummary(self.run_id, self.session_key, self.agent_id, self.task, self.status, self.started_at, self.parent_session_key)


def subagent_key(agent_id: str, run_id: str) -> str:
    return f"agent:{agent_id}:subagent:{run_id}"


def _line(text: str, limit: int = TASK_SHOWN) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "\u2026"


def _event_message(text: str) -> Message:
    """A child's result as its sub-agent parent gets it: clawbot's own report, not a user's."""
    from clawbot.agent.inbound import SESSION_CHANNEL

    return Message(Role.USER, (TextBlock(text),), meta={"channel": SESSION_CHANNEL, "chat_type": "session", "system_event": True})


def cut_off_announcement(run: CutOff) -> str:
    """What the parent's model reads when clawbot stopped while ``run`` ran: its result is lost."""
    return (
        f"Sub-agent {run.run_id} (agent {run.agent_id}, session {run.session_key}) was interrupted: clawbot stopped while it ran, "
        f"and its result is lost.\nTask: {_line(run.task)}\nTell the user it did not finish, and what that means for their request."
    )


def announcement(run: SubagentRun) -> str:
    """What the parent's model reads when ``run`` ended: how, and its result (as data)."""
    from clawbot.safetext import fence

    seconds = time.monotonic() - run.started
    head = f"Sub-agent {run.run_id} (agent {run.agent_id}, session {run.session_key}) {run.status} after {seconds:.0f} s.\nTask: {_line(run.task)}"
    if run.status == "done":
        body = fence(run.result or "(no text)", label=f"the result of sub-agent {run.run_id}")
        return f"{head}\n{body}\nTell the user what matters from it."
    why = f"\nWhy: {run.result}" if run.result else ""
    return f"{head}{why}\nTell the user it did not finish, and what that means for their request."


@attrs.define(eq=False)
class Subagents:
    """The sub-agents of one running clawbot (they end with it; :attr:`record` keeps the running ones on disk)."""

    shared: SharedServices
    _runs: dict[str, SubagentRun] = attrs.field(factory=dict)
    #: sub-agent session -> results of its own sub-agents, waiting for its next turn
    _inbox: dict[str, asyncio.Queue[str]] = attrs.field(factory=dict)
    #: parent session -> how many of its runs a one-shot CLI run has already waited for
    _counted: dict[str, int] = attrs.field(factory=dict)

    @property
    def record(self) -> SubagentRecord:
        """The runs on disk, for the next gateway to announce the ones it finds cut off."""
        return SubagentRecord(self.shared.kernel.paths.root / "gateway" / "subagents.json")

    def take_cut_off(self) -> list[CutOff]:
        """The runs an earlier process left running (it crashed or stopped), forgotten on disk."""
        try:
            return self.record.take_cut_off()
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

    @property
    def _settings(self):  # noqa: ANN202 - SubagentsConfig
        return self.shared.kernel.config.agents.defaults.subagents

    def depth_of(self, session_key: str) -> int:
        """0 for a session a person talks to; a sub-agent's is its parent's plus one."""
        run = self._by_session(session_key)
        if run is not None:
            return run.depth
        return session_key.split(":").count("subagent")  # one from before a restart: at least that deep

    def _by_session(self, session_key: str) -> SubagentRun | None:
        if session_kind(session_key) != "subagent":
            return None
        return self._runs.get(session_key.rsplit(":", 1)[-1])

    def running(self) -> list[SubagentRun]:
        return [r for r in self._runs.values() if r.status == "running"]

    def of_parent(self, parent_session_key: str) -> list[SubagentSummary]:
        """The runs ``parent_session_key`` started, newest first."""
        runs = [r for r in self._runs.values() if r.parent_session_key == parent_session_key]
        return [r.summary() for r in reversed(runs)]

    def take_started(self, parent_session_key: str) -> int:
        """How many runs the session started since the last call: a one-shot ``clawbot
        agent`` waits for exactly that many announcements before it exits."""
        total = sum(1 for r in self._runs.values() if r.parent_session_key == parent_session_key)
        new = total - self._counted.get(parent_session_key, 0)
        self._counted[parent_session_key] = total
        return new

    def stop(self, parent_session_key: str, run_id: str) -> str:
        from clawbot.agent.notices import quoted_line

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

    def may_spawn_agent(self, parent_agent: str, target: str, *, main: bool, reachable: Callable[[str], bool]) -> bool:
        """Its own agent always; another only from the main session, per ``tools.agent_to_agent``."""
        return target == parent_agent or (main and reachable(target))

    async def spawn(
        self,
        *,
        task: str,
        parent_agent: str,
        parent_session_key: str,
        parent_origin: InboundMessage | None,
        trust: TurnTrust,
        parent_tools: frozenset[str],
        agent_id: str,
        model: str | None,
        timeout_s: float | None,
    ) -> SubagentSummary:
        from clawbot.agent.policy import agent_tools

        settings = self._settings
        if not task.strip():
            raise ServiceUnavailable("the task is empty: say what the sub-agent should do")
        depth = self.depth_of(parent_session_key) + 1
        if depth > settings.max_depth:
            raise ServiceUnavailable(
                f"sub-agents may nest only {settings.max_depth} level(s) deep (agents.defaults.subagents.max_depth); do this part yourself"
            )
        running = len(self.running())
        if running >= settings.max_concurrent:
            raise ServiceUnavailable(
                f"{running} sub-agents are running already, the most allowed (agents.defaults.subagents.max_concurrent); "
                "nothing was started: wait for one to report back, or do it yourself"
            )
        if timeout_s is not None and timeout_s <= 0:
            raise ServiceUnavailable("timeout_s must be more than 0 seconds")
        timeout = min(float(timeout_s), settings.timeout_s) if timeout_s is not None else float(settings.timeout_s)
        kernel = self.shared.kernel
        if model:
            from clawbot.agent.models import ModelError, resolve_ref

            try:
                resolve_ref(kernel, model, agent_id)
            except ModelError as exc:
                raise ServiceUnavailable(f"model {model!r}: {exc}") from None
        base = await self.shared.conversation(agent_id)
        tools = {n: t for n, t in agent_tools(kernel, agent_id).items() if n in parent_tools}
        if depth >= settings.max_depth:  # at the limit it could only be refused: not offered
            tools.pop(SPAWN_TOOL, None)
        conversation = attrs.evolve(base, tools=tools)
        run_id = secrets.token_hex(4)
        while run_id in self._runs:
            run_id = secrets.token_hex(4)
        run = SubagentRun(
            run_id,
            subagent_key(agent_id, run_id),
            agent_id,
            task,
            parent_session_key,
            depth,
            datetime.now(UTC).isoformat(timespec="seconds"),
            parent_origin=parent_origin,
            trust=trust,
        )
        self._forget_old()
        self._runs[run_id] = run
        self._write_down(run)
        from clawbot.agent.user_turns import session_message

        message = session_message(task, from_session=parent_session_key, from_agent=parent_agent)
        run.job = self.shared.spawn(self._run(run, conversation, message, model, timeout), name=f"subagent:{run_id}")
        return run.summary()

    async def _run(self, run: SubagentRun, conversation: Conversation, message: Message, model: str | None, timeout: float) -> None:
        from clawbot.agent.turn_options import TurnOptions

        options = TurnOptions(model=model, kind="subagent", trust=run.trust)
        inbox = self._inbox.setdefault(run.session_key, asyncio.Queue())
        shutting_down = False
        try:
            async with asyncio.timeout(timeout):
                result = await conversation.send(run.session_key, message, options=options)
                # Its own sub-agents report to it, and it answers only once they all did.
                while any(r.status == "running" for r in self._runs.values() if r.parent_session_key == run.session_key) or not inbox.empty():
                    event = await inbox.get()
                    result = await conversation.send(run.session_key, _event_message(event), options=options)
            run.status, run.result = "done", result.text
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
        from clawbot.agent.turn_options import TurnOptions

        kernel = self.shared.kernel
        info = kernel.sessions.get(run.session_key)
        if info is not None:  # its session is over: plugins see it end like any other
            event = SessionEvent(run.agent_id, run.session_key, info.session_id, f"sub-agent {run.status}")
            await kernel.plugins.notify("clawbot_session_end", event=event)
        if not run.announce:
            return
        text = announcement(run)
        if session_kind(run.parent_session_key) == "subagent":
            parent = self._by_session(run.parent_session_key)
            if parent is not None and parent.status == "running":
                self._inbox.setdefault(parent.session_key, asyncio.Queue()).put_nowait(text)
            else:  # the sub-agent that started it is over: nobody waits for this result
                log.info("sub-agent %s ended after the sub-agent that started it", run.run_id)
            return
        port, origin = self.shared.port, run.parent_origin or self.shared.local_origin
        if port is not None and origin is not None:
            port.inject(origin, run.parent_session_key, text)
            return
        # No chat to answer in (the parent was itself asked by another session): its model
        # still learns the result, and its reply stays in its history.
        try:
            conversation = await self.shared.conversation(agent_of(run.parent_session_key))
            await conversation.send(run.parent_session_key, _event_message(text), options=TurnOptions(trust=run.trust))
        except Exception:
            log.exception("reporting sub-agent %s to %s failed", run.run_id, run.parent_session_key)
