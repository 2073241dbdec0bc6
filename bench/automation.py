"""The cron scheduler with 10,000 jobs: CPU while nothing is due, and how late due jobs start.

Run:  cd /work/main && .venv/bin/python bench/automation.py [--jobs 10000] [--idle 30]

The real :class:`~clawbot_automation.scheduler.Scheduler` and :class:`CronStore` (files in a
temporary state dir), on the real clock; the run function is trivial (it notes when it
started), not a model turn, so what is measured is the scheduler itself.

* **idle**: ``--jobs`` jobs (a third each: cron expressions, ``every`` intervals and ``at``
  times), none due for hours; ``serve()`` runs for ``--idle`` seconds and the process's CPU
  time over that stretch is measured (``time.process_time``). Target: about 0.
* **burst**: ``--jobs`` jobs all due within one second of the next minute boundary (the cron
  third exactly on it, ``* * * * *``; the ``at`` and ``every`` thirds spread over the second
  after it). Lateness = when the run function started minus when the job was due. Target:
  p99 <= 100 ms. ``--max-concurrent-runs`` (default 2, the setting's default) caps the runs
  at once: with 2, the 3,333 jobs due at one instant wait for each other in turn; a higher cap
  shows the scheduler's own dispatch cost.
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import statistics
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from clawbot.statefile import atomic_write_json
from clawbot_automation.config import CronConfig
from clawbot_automation.cron_store import CronStore, iso
from clawbot_automation.records import CronJob, CronRun, CronSchedule
from clawbot_automation.scheduler import Scheduler, new_run_id


def write_jobs(store: CronStore, jobs: list[CronJob]) -> None:
    """All at once (adding 10,000 one by one would rewrite the file 10,000 times)."""
    from clawbot_automation.cron_store import converter

    store.root.mkdir(parents=True, exist_ok=True)
    (store.root / "runs").mkdir(exist_ok=True)
    atomic_write_json(store.jobs_path, {"version": 1, "jobs": [converter.unstructure(j) for j in jobs]})


def idle_jobs(count: int, now: datetime) -> list[CronJob]:
    jobs = []
    for i in range(count):
        if i % 3 == 0:
            schedule = CronSchedule("cron", f"{i % 60} {(now.hour + 6 + i % 12) % 24} * * *", "UTC")
        elif i % 3 == 1:
            schedule = CronSchedule("every", f"{6 + i % 18}h")
        else:
            schedule = CronSchedule("at", iso(now + timedelta(hours=6, seconds=i)))
        jobs.append(CronJob(f"job-{i}", schedule, "x", created_at=iso(now)))
    return jobs


def burst_jobs(count: int, boundary: datetime, now: datetime) -> list[CronJob]:
    jobs = []
    for i in range(count):
        offset = timedelta(microseconds=(i * 1_000_000) // count)
        if i % 3 == 0:
            schedule, created = CronSchedule("cron", "* * * * *", "UTC"), now
        elif i % 3 == 1:
            interval = timedelta(hours=1)
            schedule, created = CronSchedule("every", "1h"), boundary + offset - interval
        else:
            schedule, created = CronSchedule("at", iso(boundary + offset)), now
        jobs.append(CronJob(f"job-{i}", schedule, "x", created_at=iso(created)))
    return jobs


async def idle(root: Path, count: int, seconds: float) -> dict[str, float]:
    now = datetime.now(UTC)
    store = CronStore(root / "idle")
    write_jobs(store, idle_jobs(count, now))

    async def never(job: CronJob, due: datetime, reason: str) -> CronRun:
        raise AssertionError(f"{job.name} ran; nothing was due")

    scheduler = Scheduler(store, never, CronConfig(), "UTC", record=False)
    started = time.perf_counter()
    scheduler.load()
    load_s = time.perf_counter() - started
    task = asyncio.create_task(scheduler.serve())
    await asyncio.sleep(0.5)  # the first tick done
    cpu0, wall0 = time.process_time(), time.perf_counter()
    usage0 = resource.getrusage(resource.RUSAGE_SELF)
    await asyncio.sleep(seconds)
    cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    usage = resource.getrusage(resource.RUSAGE_SELF)
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    return {
        "load_ms": load_s * 1000,
        "cpu_ms": cpu * 1000,
        "cpu_ms_per_s": cpu * 1000 / wall,
        "wakeups": usage.ru_nvcsw - usage0.ru_nvcsw,
        "wall_s": wall,
    }


async def burst(root: Path, count: int, max_concurrent_runs: int = 2) -> dict[str, float]:
    now = datetime.now(UTC)
    boundary = (now + timedelta(minutes=1)).replace(second=0, microsecond=0)
    if (boundary - now).total_seconds() < 5:  # time to load before it
        boundary += timedelta(minutes=1)
    store = CronStore(root / "burst")
    write_jobs(store, burst_jobs(count, boundary, now))
    lateness: list[float] = []
    done = asyncio.Event()

    async def note(job: CronJob, due: datetime, reason: str) -> CronRun:
        lateness.append(time.time() - due.timestamp())
        if len(lateness) >= count:
            done.set()
        stamp = iso(datetime.now(UTC))
        return CronRun(job.name, new_run_id(), iso(due), stamp, stamp, "ok", None, "", "", reason)

    scheduler = Scheduler(store, note, CronConfig(max_concurrent_runs=max_concurrent_runs), "UTC", record=False)
    scheduler.load()
    task = asyncio.create_task(scheduler.serve())
    await asyncio.wait_for(done.wait(), (boundary - datetime.now(UTC)).total_seconds() + 60)
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    ordered = sorted(lateness)
    return {
        "runs": len(ordered),
        "p50_ms": statistics.median(ordered) * 1000,
        "p99_ms": ordered[int(len(ordered) * 0.99) - 1] * 1000,
        "max_ms": ordered[-1] * 1000,
    }


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=10_000)
    parser.add_argument("--idle", type=float, default=30.0, help="seconds of idle measured")
    parser.add_argument(
        "--max-concurrent-runs",
        type=int,
        default=2,
        help="cron.max_concurrent_runs for the burst (default 2, the setting's default: jobs due at one instant queue behind it)",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        quiet = await idle(root, args.jobs, args.idle)
        print(
            f"idle, {args.jobs:,} jobs: load {quiet['load_ms']:.0f} ms; over {quiet['wall_s']:.1f} s: CPU {quiet['cpu_ms']:.2f} ms "
            f"({quiet['cpu_ms_per_s']:.3f} ms/s), {quiet['wakeups']} voluntary context switches"
        )
        print("burst: waiting for the next minute boundary ...", flush=True)
        late = await burst(root, args.jobs, args.max_concurrent_runs)
        print(
            print(
                f"burst, {late['runs']:,} runs due within 1 s, max_concurrent_runs {args.max_concurrent_runs}: "
                f"lateness p50 {late['p50_ms']:.1f} ms, p99 {late['p99_ms']:.1f} ms, max {late['max_ms']:.1f} ms"
            )
        )


if __name__ == "__main__":
    asyncio.run(main())
