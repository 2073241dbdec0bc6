"""Runs cut off by a stop or a kill, on a clock the test moves: recorded as running before
they start, marked interrupted by the next start, run again per ``cron.catch_up``, never a
third time, and never while another holder of the job's lock runs it.

A stop (``aclose``) leaves the run's record exactly as a SIGKILL would (the real kill is in
tests/e2e/test_cron_crash_e2e.py): ``running``, with the job's lock released.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta
from pathlib import Path

import pytest
from clawbot_automation.run_lock import JobRunning, job_run_lock

from .test_scheduler import T0, Clock, hourly, make


async def _cut_off(tmp_path: Path, clock: Clock) -> str:
    """Start the hourly job at T0+1h and stop clawbot while it runs; its run id."""
    store, scheduler, runs = make(tmp_path, clock)
    store.add(hourly(), T0)
    scheduler.load()
    runs.gate = asyncio.Event()  # never set: the run is cut off
    clock.now = T0 + timedelta(hours=1)
    scheduler.tick()
    for _ in range(100):
        if store.runs("report"):
            break
        await asyncio.sleep(0.01)
    [started] = store.runs("report")
    assert started.status == "running" and started.finished_at == ""  # recorded before the turn
    await scheduler.aclose()
    assert store.runs("report") == [started]  # as a kill leaves it
    return started.run_id


@pytest.mark.parametrize(
    ("policy", "down_hours", "calls", "history"),
    [
        ("once", 0.5, [1, "retry"], [("interrupted", "schedule"), ("ok", "retry")]),
        ("once", 3.5, [4, "catch-up"], [("interrupted", "schedule"), ("ok", "catch-up")]),  # one run covers both
        ("all", 2.5, [1, "retry", 2, "catch-up", 3, "catch-up"], [("interrupted", "schedule")] + [("ok", "retry")] + [("ok", "catch-up")] * 2),
        ("none", 0.5, [], [("interrupted", "schedule")]),
        ("none", 2.5, [], [("interrupted", "schedule"), ("skipped", "catch-up")]),
    ],
)
async def test_an_interrupted_run_follows_catch_up(tmp_path: Path, policy: str, down_hours: float, calls: list, history: list) -> None:
    clock = Clock(T0)
    run_id = await _cut_off(tmp_path, clock)
    clock.now = T0 + timedelta(hours=1 + down_hours)
    store, scheduler, runs = make(tmp_path, clock, catch_up=policy)
    scheduler.load()
    await scheduler.settle()
    expected = [("report", T0 + timedelta(hours=hours), reason) for hours, reason in zip(calls[::2], calls[1::2], strict=True)]
    assert runs.calls == expected
    found = store.runs("report")
    assert [(r.status, r.reason) for r in found] == history
    assert found[0].run_id == run_id and f"cron.catch_up = {policy}" in found[0].error
    _, again, runs_again = make(tmp_path, clock, catch_up=policy)  # handled: a second start does nothing more
    again.load()
    await again.settle()
    assert runs_again.calls == []


async def test_a_retry_cut_off_again_is_not_run_a_third_time(tmp_path: Path) -> None:
    clock = Clock(T0)
    await _cut_off(tmp_path, clock)
    clock.now = T0 + timedelta(hours=1, minutes=10)
    store, scheduler, runs = make(tmp_path, clock)
    runs.gate = asyncio.Event()  # the retry hangs too (the job kills its gateway, say)
    scheduler.load()
    await asyncio.sleep(0.05)
    assert runs.calls == [("report", T0 + timedelta(hours=1), "retry")]
    await scheduler.aclose()
    _, third, runs_third = make(tmp_path, clock)
    third.load()
    await third.settle()
    assert runs_third.calls == []
    assert [(r.status, r.reason) for r in store.runs("report")] == [("interrupted", "schedule"), ("interrupted", "retry")]
    assert "clawbot stopped while it ran" in store.runs("report")[1].error


async def test_a_job_another_holder_runs_is_neither_run_nor_marked_interrupted(tmp_path: Path) -> None:
    clock = Clock(T0)
    store, scheduler, runs = make(tmp_path, clock)
    store.add(hourly(), T0)
    scheduler.load()
    clock.now = T0 + timedelta(hours=1)
    with job_run_lock(store.lock_path("report"), "report"):  # e.g. `clawbot cron run report` elsewhere
        scheduler.tick()
        await scheduler.settle()
        with pytest.raises(JobRunning, match="cron job report is running already"):
            await scheduler.run_now(hourly())
    assert runs.calls == []
    [skipped] = store.runs("report")
    assert skipped.status == "skipped" and "is running already" in skipped.error
    await scheduler.run_now(hourly())  # the holder is done: it runs
    assert [r.status for r in store.runs("report")] == ["skipped", "ok"]
