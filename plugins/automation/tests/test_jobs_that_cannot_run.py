"""Cron jobs that cannot run, or cannot run as asked, never stop the others and never pass
silently: impossible dates and past times are refused when added, a bad job already stored
leaves the rest scheduled, a resumed job does not fire for a time long past, a run cut off by
shutdown is recorded, a report beside HEARTBEAT_OK is still delivered, a hook that cancels
the delivery makes the run fail, and the cron tool stays within the agents its session may
reach and out of its own session's way."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from clawbot.testing import plugin_from_hooks
from clawbot.types import ServiceUnavailable, Settings
from clawbot_automation.cron_store import CronStore
from clawbot_automation.jobs import JobError, add_job
from clawbot_automation.records import CronJob, CronSchedule
from clawbot_automation.service import cron_store

from .test_cron_runs import Running, config, hourly
from .test_scheduler import T0, Clock, make

WEDNESDAY_3PM = datetime(2026, 6, 10, 15, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("schedule", "problem"),
    [
        (CronSchedule("cron", "0 0 30 2 *"), "never due"),
        (CronSchedule("at", "2020-01-01T09:00"), "has already passed"),
        (CronSchedule("every", "99999999999999999999d"), "longer than a year"),
        (CronSchedule("at", "9999-12-31T23:00", "America/New_York"), "never due"),
    ],
    ids=["february-30", "a-past-time", "an-endless-interval", "past-the-calendar"],
)
def test_a_schedule_that_can_never_run_is_refused_by_name(tmp_path: Path, default_settings, schedule, problem) -> None:
    with pytest.raises(JobError, match=problem):
        add_job(CronStore(tmp_path), CronJob("bad", schedule, "x"), default_settings, T0)


async def test_one_job_that_cannot_be_scheduled_leaves_the_others_running(tmp_path: Path) -> None:
    clock = Clock(T0)
    store, scheduler, runs = make(tmp_path, clock)
    store.add(CronJob("feb30", CronSchedule("cron", "0 0 30 2 *"), "x"), T0)  # stored before the check existed
    store.add(CronJob("ok", CronSchedule("every", "1m"), "x"), T0)
    scheduler.load()
    clock.now = T0 + timedelta(minutes=1)
    scheduler.tick()
    await scheduler.settle()
    assert [name for name, _, _ in runs.calls] == ["ok"]


async def test_a_job_resumed_after_a_week_waits_for_its_next_time(tmp_path: Path) -> None:
    clock = Clock(WEDNESDAY_3PM)
    store, scheduler, runs = make(tmp_path, clock)
    daily = CronJob("standup", CronSchedule("cron", "0 9 * * *"), "x", enabled=False)
    store.add(daily, WEDNESDAY_3PM - timedelta(days=8))
    store.set_due({"standup": WEDNESDAY_3PM - timedelta(days=7, hours=6)})  # it last ran a week ago, then was paused
    scheduler.load()
    store.replace(CronJob("standup", daily.schedule, "x", created_at=store.get("standup").created_at))  # enabled again
    scheduler.changed()
    assert scheduler.next_due() == datetime(2026, 6, 11, 9, 0, tzinfo=UTC)
    scheduler.tick()
    assert runs.calls == []


async def test_a_run_cut_off_by_shutdown_is_recorded_as_interrupted(tmp_path: Path) -> None:
    clock = Clock(T0)
    store, scheduler, runs = make(tmp_path, clock)
    runs.gate = asyncio.Event()  # the run never finishes by itself
    store.add(CronJob("slow", CronSchedule("every", "1m"), "x"), T0)
    scheduler.load()
    clock.now = T0 + timedelta(minutes=1)
    scheduler.tick()
    await asyncio.sleep(0)
    await scheduler.aclose()
    [run] = store.runs("slow")
    assert run.status == "running"  # as after a kill: the next start decides what follows
    _, again, retried = make(tmp_path, clock)
    again.load()
    await again.settle()
    first, retry = store.runs("slow")
    assert (first.run_id, first.status) == (run.run_id, "interrupted") and "run again at start-up (cron.catch_up = once)" in first.error
    assert (retry.status, retry.reason, retry.scheduled_at) == ("ok", "retry", run.scheduled_at)
    assert retried.calls == [("slow", T0 + timedelta(minutes=1), "retry")]


@pytest.fixture
def default_settings() -> Settings:
    """What plugins read of a configuration that sets nothing."""
    return Settings()


async def _running(make_kernel, fake_channel, fake_llm_server, workspace, **plugins):
    kernel = await make_kernel(config=config(fake_llm_server, workspace), load_entrypoints=True, plugins={"fake": fake_channel.as_plugin(), **plugins})
    return Running(kernel, fake_channel)


async def test_a_report_beside_heartbeat_ok_is_still_delivered(make_kernel, fake_channel, fake_llm_server, workspace) -> None:
    fake_llm_server.reply("Reminder: call mom\nHEARTBEAT_OK")
    async with await _running(make_kernel, fake_channel, fake_llm_server, workspace) as running:
        await running.due(hourly("mom"))
        assert fake_channel.texts() == ["Reminder: call mom"]
        [run] = cron_store(running.kernel.state_dir, running.cron).runs("mom")
        assert (run.status, run.delivered) == ("ok", True)


async def test_a_delivery_a_plugin_cancels_is_a_failed_run(make_kernel, fake_channel, fake_llm_server, workspace) -> None:
    fake_llm_server.reply("Your daily summary")
    cancel = plugin_from_hooks(clawbot_message_sending=lambda event: False)
    async with await _running(make_kernel, fake_channel, fake_llm_server, workspace, cancel=cancel) as running:
        await running.due(hourly("summary"))
        assert fake_channel.sent == []
        [run] = cron_store(running.kernel.state_dir, running.cron).runs("summary")
        assert (run.status, run.delivered) == ("failed", False) and "cancelled" in run.error


async def test_the_cron_tool_stays_within_reach_and_out_of_its_own_sessions_way(make_kernel, fake_channel, fake_llm_server, workspace) -> None:
    async with await _running(make_kernel, fake_channel, fake_llm_server, workspace) as running:
        cron = running.cron_jobs_of("agent:main:main")
        with pytest.raises(ServiceUnavailable, match="may not manage jobs of agent 'other'"):
            cron.add(CronJob("elsewhere", CronSchedule("every", "1h"), "x", agent_id="other"))
        with pytest.raises(ServiceUnavailable, match="channel 'nosuch' is not running"):
            cron.add(CronJob("lost", CronSchedule("every", "1h"), "x", deliver="nosuch:1"))
        cron.add(CronJob("here", CronSchedule("every", "1h"), "x", session="main"))
        with pytest.raises(ServiceUnavailable, match="runs in this very session"):
            await asyncio.wait_for(cron.run_now("here"), 5)
