"""The cron scheduler on a clock the test moves: due runs, restarts, catch-up, overlap, timeouts.

Runs here are plain functions (the turn itself is tested in test_cron_runs.py); the store is
the real one, on files under tmp_path, so a "restart" is a new store and scheduler on them.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from clawbot_automation.config import CronConfig
from clawbot_automation.cron_store import CronStore, iso
from clawbot_automation.records import CronJob, CronRun, CronSchedule
from clawbot_automation.scheduler import Scheduler, new_run_id

T0 = datetime(2026, 11, 26, 8, 0, tzinfo=UTC)


class Clock:
    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


class Recorder:
    """A run function that records (job, due, reason) and finishes at once, or waits for ``gate``."""

    def __init__(self, clock: Clock) -> None:
        self.clock, self.calls, self.gate = clock, [], None

    async def __call__(self, job: CronJob, due: datetime, reason: str) -> CronRun:
        self.calls.append((job.name, due, reason))
        if self.gate is not None:
            await self.gate.wait()
        now = iso(self.clock())
        return CronRun(job.name, new_run_id(), iso(due), now, now, "ok", None, "", f"agent:main:cron:{job.name}", reason)


def make(tmp_path: Path, clock: Clock, **config: object) -> tuple[CronStore, Scheduler, Recorder]:
    store = CronStore(tmp_path / "cron")
    recorder = Recorder(clock)
    return store, Scheduler(store, recorder, CronConfig(**config), "UTC", clock), recorder


def hourly(name: str = "report") -> CronJob:
    return CronJob(name, CronSchedule("every", "1h"), "report, please")


async def test_a_due_job_runs_once_and_is_scheduled_again(tmp_path: Path) -> None:
    clock = Clock(T0)
    store, scheduler, runs = make(tmp_path, clock)
    store.add(hourly(), T0)
    scheduler.load()
    assert scheduler.next_due() == T0 + timedelta(hours=1)
    clock.now = T0 + timedelta(minutes=59)
    scheduler.tick()
    await scheduler.settle()
    assert runs.calls == []
    clock.now = T0 + timedelta(hours=1, seconds=1)
    assert scheduler.tick() == T0 + timedelta(hours=2)
    await scheduler.settle()
    assert runs.calls == [("report", T0 + timedelta(hours=1), "schedule")]
    assert [r.status for r in store.runs("report")] == ["ok"]


async def test_jobs_and_last_runs_survive_a_restart(tmp_path: Path) -> None:
    clock = Clock(T0)
    store, scheduler, runs = make(tmp_path, clock)
    store.add(hourly(), T0)
    store.add(CronJob("morning", CronSchedule("cron", "0 9 * * *", "Europe/Berlin"), "good morning"), T0)
    scheduler.load()
    clock.now = T0 + timedelta(hours=1)
    scheduler.tick()
    await scheduler.settle()
    await scheduler.aclose()

    clock.now = T0 + timedelta(hours=1, minutes=30)  # back up before the next time: nothing was missed
    store2, scheduler2, runs2 = make(tmp_path, clock)
    scheduler2.load()
    await scheduler2.settle()
    assert [j.name for j in store2.jobs()] == ["morning", "report"]
    assert runs2.calls == []
    assert scheduler2.due_times() == {"report": T0 + timedelta(hours=2), "morning": datetime(2026, 11, 27, 8, 0, tzinfo=UTC)}
    assert [r.reason for r in store2.runs("report")] == ["schedule"]


@pytest.mark.parametrize(
    ("policy", "down_hours", "expected_runs", "expected_history"),
    [
        ("once", 5.5, 1, [("ok", "catch-up")]),
        ("all", 5.5, 5, [("ok", "catch-up")] * 5),
        ("all", 30.5, 10, [("ok", "catch-up")] * 10),  # at most the last 10
        ("none", 5.5, 0, [("skipped", "catch-up")]),
        ("once", 0.5, 0, []),  # nothing was due while it was down
    ],
)
async def test_catch_up_after_downtime(tmp_path: Path, policy: str, down_hours: float, expected_runs: int, expected_history: list) -> None:
    clock = Clock(T0)
    store, _, _ = make(tmp_path, clock)
    store.add(hourly(), T0)
    clock.now = T0 + timedelta(hours=down_hours)
    _, scheduler, runs = make(tmp_path, clock, catch_up=policy)
    scheduler.load()
    await scheduler.settle()
    assert len(runs.calls) == expected_runs
    assert all(reason == "catch-up" for _, _, reason in runs.calls)
    assert [(r.status, r.reason) for r in store.runs("report")] == expected_history
    if policy == "none" and expected_history:
        assert "cron.catch_up = none" in store.runs("report")[0].error
    # caught up: the next run is an hour from now, and a restart does not catch up again
    assert scheduler.next_due() == clock.now + timedelta(hours=1) or down_hours < 1
    _, again, runs_again = make(tmp_path, clock, catch_up=policy)
    again.load()
    await again.settle()
    assert runs_again.calls == []


async def test_a_missed_at_job_catches_up_and_then_never_runs_again(tmp_path: Path) -> None:
    clock = Clock(T0)
    store, _, _ = make(tmp_path, clock)
    store.add(CronJob("once", CronSchedule("at", "2026-11-26T09:00Z"), "remind me"), T0)
    clock.now = T0 + timedelta(hours=3)
    _, scheduler, runs = make(tmp_path, clock)
    scheduler.load()
    await scheduler.settle()
    assert runs.calls == [("once", T0 + timedelta(hours=1), "catch-up")]
    assert scheduler.next_due() is None


async def test_a_job_still_running_skips_its_next_time_and_runs_are_limited(tmp_path: Path) -> None:
    clock = Clock(T0)
    store, scheduler, runs = make(tmp_path, clock, max_concurrent_runs=1)
    store.add(CronJob("a", CronSchedule("every", "1m"), "x"), T0)
    store.add(CronJob("b", CronSchedule("every", "1m"), "y"), T0)
    scheduler.load()
    runs.gate = asyncio.Event()
    clock.now = T0 + timedelta(minutes=1)
    scheduler.tick()
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    assert len(runs.calls) == 1  # one slot: b waits for a
    clock.now = T0 + timedelta(minutes=2)
    scheduler.tick()
    runs.gate.set()
    await scheduler.settle()
    statuses = sorted((r.job, r.status) for name in ("a", "b") for r in store.runs(name))
    assert statuses == [("a", "ok"), ("a", "skipped"), ("b", "ok"), ("b", "skipped")]
    assert all("still running" in r.error for name in ("a", "b") for r in store.runs(name) if r.status == "skipped")


async def test_a_run_over_the_timeout_fails(tmp_path: Path) -> None:
    clock = Clock(T0)
    store, scheduler, runs = make(tmp_path, clock, run_timeout_s=1)
    store.add(hourly(), T0)
    runs.gate = asyncio.Event()  # never set: the run hangs
    loop = asyncio.get_running_loop()
    original = loop.time
    scheduler.load()
    clock.now = T0 + timedelta(hours=1)
    scheduler.tick()
    await asyncio.sleep(0)
    # move the loop's clock past the timeout instead of sleeping through it
    loop.time = lambda: original() + 5  # type: ignore[method-assign]
    try:
        await asyncio.sleep(0.01)
        await scheduler.settle()
    finally:
        loop.time = original  # type: ignore[method-assign]
    [run] = store.runs("report")
    assert run.status == "failed" and "cron.run_timeout_s (1s)" in run.error


async def test_serve_sleeps_until_due_and_wakes_when_jobs_change(tmp_path: Path) -> None:
    clock = Clock(T0)
    store, scheduler, runs = make(tmp_path, clock)
    task = asyncio.create_task(scheduler.serve())
    try:
        await asyncio.sleep(0.01)
        store.add(CronJob("soon", CronSchedule("at", iso(T0 + timedelta(seconds=1))), "x"), T0)
        clock.now = T0 + timedelta(seconds=2)
        scheduler.changed()  # what the cron tool does after adding a job
        for _ in range(100):
            if runs.calls:
                break
            await asyncio.sleep(0.01)
        assert runs.calls == [("soon", T0 + timedelta(seconds=1), "schedule")]
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
