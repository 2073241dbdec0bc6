"""The cron scheduler: one asyncio task that sleeps until the next job is due.

A heap holds each enabled job's next due time; the task sleeps until the earliest (woken
early by :meth:`Scheduler.changed`, and at least every :data:`RECHECK_S` to notice jobs the
CLI changed in the jobs file), starts what is due and sleeps again: nothing is polled per
job, so 10,000 jobs cost nothing while none is due. Tests drive it by :meth:`tick` with a
clock they set.

Runs missed while clawbot was not running follow ``cron.catch_up``: ``once`` (one run for
all of a job's missed ones, reason ``catch-up``), ``all`` (each, at most the last 10),
``none`` (recorded as one ``skipped`` run). At most ``cron.max_concurrent_runs`` run at
once; one taking longer than ``cron.run_timeout_s`` fails. A job still running when it is
due again skips that time (recorded).

A run holds its job's lock (:mod:`~clawbot_automation.run_lock`) and is recorded as
``running`` before it starts, so a job never runs twice at once, in this process or another,
and a run cut off by a kill or a stop is never lost: the first load after a restart marks
it ``interrupted`` and follows ``cron.catch_up`` for it as for a missed run (``once`` and
``all`` run it again, reason ``retry``, unless a catch-up run covers it; ``none`` does
not). A retry that is itself interrupted is not run a third time: a job that kills its
gateway must not do so on every start.

One job's bad entry, one unreadable or unwritable state file, never stops the loop: what
cannot be read is skipped (reported once by the store) and the other jobs run.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import heapq
import logging
import secrets
from collections.abc import Awaitable, Callable, Iterator
from datetime import datetime

import attrs
from clawbot.statefile import report_once

from clawbot_automation.clock import Clock, utc_now
from clawbot_automation.config import CronConfig
from clawbot_automation.cron_store import CronStore, iso, parse_iso
from clawbot_automation.records import CronJob, CronRun, CronSchedule
from clawbot_automation.run_lock import JobRunning, job_run_lock
from clawbot_automation.schedule import due_between, safe_next_due

log = logging.getLogger(__name__)

RunJob = Callable[[CronJob, datetime, str], Awaitable[CronRun]]
"""(job, when it was due, reason) -> the finished run (never raises for a failed turn)."""
RECHECK_S = 10.0
FLUSH_S = 1.0
"""Due times are written at most this often: a burst of jobs costs one write, not one each
(a crash loses at most this much, which catch-up then treats as missed)."""
CATCH_UP_ALL_MAX = 10
StartPlan = list[tuple[datetime, str]]
"""When each run of one start was due, and why it runs (``schedule``, ``catch-up``, ``retry``)."""


def new_run_id() -> str:
    return secrets.token_hex(6)


@attrs.define(eq=False)
class Scheduler:
    store: CronStore
    run_job: RunJob
    config: CronConfig = attrs.field(factory=CronConfig)
    user_tz: str = ""
    clock: Clock = utc_now
    record: bool = True
    """Whether runs go to the jobs' history and hold their job's lock (the benchmark's
    trivial runs do neither)."""
    _heap: list[tuple[float, int, str]] = attrs.field(factory=list)
    _due: dict[str, tuple[CronJob, datetime]] = attrs.field(factory=dict)
    _busy: set[str] = attrs.field(factory=set)
    """Jobs queued or running: one due again meanwhile is skipped, not run twice at once."""
    _queue: collections.deque[tuple[CronJob, StartPlan]] = attrs.field(factory=collections.deque)
    _tasks: set[asyncio.Task[object]] = attrs.field(factory=set)
    """The workers (at most ``cron.max_concurrent_runs``): each runs queued jobs in turn, so a
    burst of jobs due at one instant costs no task apiece."""
    _wake: asyncio.Event = attrs.field(factory=asyncio.Event)
    _slots: asyncio.Semaphore | None = None
    _version: tuple[int, int] | None = None
    _seq: int = 0
    _unsaved: dict[str, datetime] = attrs.field(factory=dict)
    _saved_at: float = 0.0
    _loaded: bool = False

    # -- the job table -------------------------------------------------------------------------

    def load(self, *, catch_up: bool = True) -> None:
        """(Re)read the jobs and each one's next due time; on the first load, what was
        missed while clawbot was not running is caught up per ``cron.catch_up``."""
        now = self.clock()
        self._version = self.store.version()
        stored = self.store.jobs()
        jobs = {job.name: job for job in stored if job.enabled}
        last = {**self.store.last_due(), **self._unsaved}
        interrupted = self._interrupted_at_start(stored, now) if catch_up and not self._loaded and self.record else {}
        scheduled = {name: due for name, (_, due) in self._due.items()}  # what was due until now
        self._heap, self._due = [], {}
        missed: list[tuple[CronJob, list[datetime]]] = []
        for job in jobs.values():
            anchor = last.get(job.name) or parse_iso(job.created_at) or now
            if anchor > now:  # a due time from the future (a clock set back, a hand edit) would hold the job back
                report_once(self.store.state_path, f"the last due time of {job.name} is in the future; ignored: it is due from now on")
                anchor = now
            try:
                if catch_up and not self._loaded:
                    was_due = due_between(job.schedule, anchor, now, self.user_tz, limit=CATCH_UP_ALL_MAX)
                    if was_due or interrupted.get(job.name):
                        missed.append((job, was_due))
                    if was_due:
                        anchor = now
                due = safe_next_due(job.schedule, anchor, self.user_tz)
                if not catch_up and due is not None and due <= now and scheduled.get(job.name) != due:
                    # resumed or rescheduled: due from now on, never at once for a time long
                    # past; a new job whose time passed while the change was on its way (the
                    # CLI's, seen within RECHECK_S) still runs at the next tick
                    if job.name in last or (now - due).total_seconds() > 2 * RECHECK_S:
                        due = safe_next_due(job.schedule, now, self.user_tz)
            except Exception as exc:  # one job that cannot be scheduled never stops the others
                log.warning("cron job %s is not scheduled: %s", job.name, exc)
                continue
            if due is not None:
                self._push(job, due)
        self._loaded = True
        for job, times in missed:
            self._catch_up(job, times, interrupted.get(job.name, []), now)

    def _interrupted_at_start(self, jobs: list[CronJob], now: datetime) -> dict[str, list[CronRun]]:
        """Mark the runs a killed or stopped clawbot left ``running`` as ``interrupted``; per
        job, those to run again (``cron.catch_up``). A job another process runs right now
        (its lock is held) is that process's business."""
        policy = self.config.catch_up
        again: dict[str, list[CronRun]] = {}
        by_name = {job.name: job for job in jobs}
        for name in self.store.with_running_records(list(by_name)):
            job = by_name[name]
            note = "clawbot stopped while it ran (killed, crashed or shut down); " + (
                "not run again: the job is disabled"
                if not job.enabled
                else "not run again: cron.catch_up = none"
                if policy == "none"
                else f"run again at start-up (cron.catch_up = {policy})"
            )
            try:
                with job_run_lock(self.store.lock_path(name), name):
                    runs = self.store.interrupt(name, now, note)
            except JobRunning:
                continue
            except OSError as exc:
                report_once(self.store.runs_path(name), f"cannot be updated ({exc.strerror or exc}); its interrupted runs are not run again")
                continue
            if any(run.reason == "retry" for run in runs):  # run again and cut off again: a job that kills its gateway must not loop
                log.warning("cron job %s: a retry of an interrupted run was interrupted too; it is not run a third time", name)
            if job.enabled and policy != "none":
                again[name] = [run for run in runs if run.reason != "retry"]
        return again

    def _push(self, job: CronJob, due: datetime) -> None:
        self._seq += 1
        self._due[job.name] = (job, due)
        heapq.heappush(self._heap, (due.timestamp(), self._seq, job.name))

    def changed(self) -> None:
        """The jobs changed (added, edited, removed here): reread them and wake up."""
        self.load(catch_up=False)
        self._wake.set()

    def next_due(self) -> datetime | None:
        """When the earliest job is due (``None``: none is scheduled)."""
        self._drop_stale()
        return self._due[self._heap[0][2]][1] if self._heap else None

    def due_times(self) -> dict[str, datetime]:
        return {name: due for name, (_, due) in self._due.items()}

    def _drop_stale(self) -> None:
        while self._heap:
            stamp, _, name = self._heap[0]
            entry = self._due.get(name)
            if entry is not None and entry[1].timestamp() == stamp:
                return
            heapq.heappop(self._heap)  # a job removed or rescheduled since this entry

    # -- running -------------------------------------------------------------------------------

    def tick(self) -> datetime | None:
        """Start every job due by now; the next due time after them."""
        now = self.clock()
        started = self._unsaved
        following_of: dict[tuple[CronSchedule, datetime], datetime | None] = {}  # jobs sharing a schedule: computed once
        while (due_at := self.next_due()) is not None and due_at <= now:
            _, _, name = heapq.heappop(self._heap)
            job, due = self._due.pop(name)
            self._start(job, [(due, "schedule")])
            started[name] = due
            key = (job.schedule, due)
            if key not in following_of:
                try:
                    following = safe_next_due(job.schedule, due, self.user_tz)
                    if following is not None and following <= now:  # behind (a suspend): not a burst of runs
                        following = safe_next_due(job.schedule, now, self.user_tz)
                except Exception:  # this job is done being scheduled; the others go on
                    log.warning("cron job %s cannot be scheduled again", job.name, exc_info=True)
                    following = None
                following_of[key] = following
            if following_of[key] is not None:
                self._push(job, following_of[key])  # type: ignore[arg-type]
        upcoming = self.next_due()
        if started and (now.timestamp() - self._saved_at >= FLUSH_S or upcoming is None or (upcoming - now).total_seconds() >= FLUSH_S):
            self.save()
        return upcoming

    def save(self) -> None:
        """Write when the jobs started so far were due (what catch-up counts from)."""
        unsaved, self._unsaved = self._unsaved, {}
        self._saved_at = self.clock().timestamp()
        try:
            self.store.set_due(unsaved)  # type: ignore[arg-type]
        except OSError as exc:  # the jobs still run; a restart may then catch up what already ran
            report_once(self.store.state_path, f"cannot be written ({exc.strerror or exc}); when jobs were last due is not kept")

    def _catch_up(self, job: CronJob, times: list[datetime], interrupted: list[CronRun], now: datetime) -> None:
        """Follow ``cron.catch_up`` for the runs of ``job`` missed while clawbot was down
        (``times``) and those it cut off (``interrupted``, already recorded as such)."""
        policy = self.config.catch_up
        if times:
            try:
                self.store.set_due({job.name: now})
            except OSError as exc:
                report_once(self.store.state_path, f"cannot be written ({exc.strerror or exc}); when jobs were last due is not kept")
        if policy == "none":
            if times:
                error = f"{len(times)} run(s) missed while clawbot was not running; cron.catch_up = none skips them"
                self._record(CronRun(job.name, new_run_id(), iso(times[-1]), iso(now), iso(now), "skipped", None, error, reason="catch-up"))
            return
        retries = sorted((due, "retry") for run in interrupted if (due := parse_iso(run.scheduled_at)) is not None)
        if policy == "once":  # one run for everything missed: a catch-up run covers an interrupted one
            plan = [(times[-1], "catch-up")] if times else retries[-1:]
        else:
            plan = sorted([*retries, *((due, "catch-up") for due in times)])
        if plan:
            self._start(job, plan)

    def _start(self, job: CronJob, plan: StartPlan) -> None:
        """Queue ``job`` for each run of ``plan`` in turn (several only when catching up)."""
        if job.name in self._busy:
            now = self.clock()
            skipped = "the previous run was still running"
            due, reason = plan[-1]
            self._record(CronRun(job.name, new_run_id(), iso(due), iso(now), iso(now), "skipped", None, skipped, reason=reason))
            return
        self._busy.add(job.name)
        self._queue.append((job, plan))
        if len(self._tasks) < self.config.max_concurrent_runs:
            worker = asyncio.get_running_loop().create_task(self._work(), name="cron-worker")
            self._tasks.add(worker)
            worker.add_done_callback(self._tasks.discard)

    async def _work(self) -> None:
        """Run queued jobs until none is left."""
        while self._queue:
            job, plan = self._queue.popleft()
            try:
                for due, reason in plan:
                    try:
                        await self._run(job, due, reason)
                    except JobRunning as exc:  # another process runs it: this time is skipped
                        now = self.clock()
                        error = f"the previous run was still running ({exc})"
                        self._record(CronRun(job.name, new_run_id(), iso(due), iso(now), iso(now), "skipped", None, error, reason=reason))
                    except Exception:  # never the other queued jobs' end
                        log.exception("cron job %s could not be run", job.name)
            finally:
                self._busy.discard(job.name)

    async def run_now(self, job: CronJob) -> CronRun:
        """Run ``job`` now (``clawbot cron run``, the cron tool), whatever its schedule;
        :class:`~clawbot_automation.run_lock.JobRunning` when it runs already."""
        return await self._run(job, self.clock(), "manual")

    async def _run(self, job: CronJob, due: datetime, reason: str) -> CronRun:
        if self._slots is None:
            self._slots = asyncio.Semaphore(self.config.max_concurrent_runs)
        async with self._slots:
            with self._job_lock(job):
                started = self.clock()
                run_id = new_run_id()
                self._begin(CronRun(job.name, run_id, iso(due), iso(started), "", "running", None, "", "", reason))

                def failed(error: str) -> CronRun:
                    return CronRun(job.name, run_id, iso(due), iso(started), iso(self.clock()), "failed", None, error, reason=reason)

                try:
                    async with asyncio.timeout(self.config.run_timeout_s):  # no extra task per run, unlike wait_for
                        run = attrs.evolve(await self.run_job(job, due, reason), run_id=run_id, started_at=iso(started))
                except TimeoutError:
                    run = failed(f"the run took longer than cron.run_timeout_s ({self.config.run_timeout_s}s)")
                # a stop mid-run (CancelledError) passes through: the record stays "running", as
                # after a kill, and the next start marks it interrupted and follows cron.catch_up
                except Exception as exc:  # a job that fails must not stop the others
                    log.exception("cron job %s failed", job.name)
                    run = failed(f"{type(exc).__name__}: {exc}")
                self._record(run)
        return run

    def _job_lock(self, job: CronJob) -> contextlib.AbstractContextManager[None]:
        """The job's run lock, and before the run a ``running`` record left by a process
        that died is marked interrupted (this run is the one that follows it)."""
        if not self.record:
            return contextlib.nullcontext()
        return self._locked_and_swept(job)

    @contextlib.contextmanager
    def _locked_and_swept(self, job: CronJob) -> Iterator[None]:
        with job_run_lock(self.store.lock_path(job.name), job.name):
            try:
                self.store.interrupt(job.name, self.clock(), "clawbot stopped while it ran (killed, crashed or shut down); not run again: a newer run followed")
            except OSError as exc:
                report_once(self.store.runs_path(job.name), f"cannot be updated ({exc.strerror or exc})")
            yield

    def _begin(self, run: CronRun) -> None:
        if not self.record:
            return
        try:
            self.store.begin_run(run)
        except OSError as exc:  # the run still runs: a job must not stop because its history cannot grow
            report_once(self.store.runs_path(run.job), f"cannot be written ({exc.strerror or exc}); runs of {run.job} are not recorded")

    def _record(self, run: CronRun) -> None:
        if not self.record:
            return
        try:
            self.store.append_run(run)
        except OSError as exc:
            report_once(self.store.runs_path(run.job), f"cannot be written ({exc.strerror or exc}); runs of {run.job} are not recorded")
        except Exception:
            log.exception("recording a run of cron job %s failed", run.job)

    async def serve(self) -> None:
        """Run until cancelled: sleep until the next due job, start it, and so on."""
        try:
            while True:
                try:
                    if not self._loaded:
                        self.load()
                    upcoming = self.tick()
                except Exception:  # one bad job or file never ends the loop: the others still run
                    log.exception("the cron scheduler met an error; it goes on")
                    upcoming = None
                self._wake.clear()
                wait = RECHECK_S if upcoming is None else min(RECHECK_S, (upcoming - self.clock()).total_seconds())
                if self._unsaved:
                    wait = min(wait, FLUSH_S)
                if wait > 0:
                    try:
                        await asyncio.wait_for(self._wake.wait(), wait)
                    except TimeoutError:
                        pass
                if self._loaded and self.store.version() != self._version:  # the CLI changed the jobs file
                    try:
                        self.load(catch_up=False)
                    except Exception:
                        log.exception("the cron jobs could not be reloaded; the ones loaded before still run")
        finally:
            await self.aclose()

    async def settle(self) -> None:
        """Wait until the runs started so far are over (tests; what a run starts counts too)."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    async def aclose(self) -> None:
        now = self.clock()
        while self._queue:  # due, but never started: the history says so
            job, plan = self._queue.popleft()
            self._busy.discard(job.name)
            error = "interrupted: clawbot stopped before it ran"
            due, reason = plan[0]
            self._record(CronRun(job.name, new_run_id(), iso(due), iso(now), iso(now), "failed", None, error, reason=reason))
        if self._unsaved:
            self.save()
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
