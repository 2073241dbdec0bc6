"""The cron scheduler as a service of ``clawbot run``, and the store every command shares."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

from clawbot.types import AgentHost, PluginContext, Service, ServiceHealth

from clawbot_automation.config import CronConfig
from clawbot_automation.cron_runner import run_cron_job
from clawbot_automation.cron_store import CronStore, converter
from clawbot_automation.records import CronJob, CronRun
from clawbot_automation.run_lock import JobRunning
from clawbot_automation.running import RunningScheduler
from clawbot_automation.scheduler import Scheduler


def cron_config(ctx: PluginContext) -> CronConfig:
    """The ``[cron]`` table this plugin claimed, from its hook context (its defaults when the
    plugin's claim is not in effect there)."""
    try:
        section = ctx.section("cron")
    except KeyError:  # a context where the plugin's claim on [cron] is not in effect
        section = None
    return section if isinstance(section, CronConfig) else CronConfig()


def cron_store(state_dir: Path, cron: CronConfig) -> CronStore:
    return CronStore(state_dir / "cron", history=cron.history)


def cron_scheduler(host: AgentHost, cron: CronConfig) -> Scheduler:
    """A scheduler whose runs are turns of ``host``'s agents, under the limits of ``cron``
    (not started yet); also what runs a job once outside a gateway (``run_now``), with the
    same lock and records."""

    async def run_job(job: CronJob, due: datetime, reason: str) -> CronRun:
        return await run_cron_job(host, job, due, reason)

    return Scheduler(cron_store(host.state_dir, cron), run_job, cron, host.settings.timezone)


class CronService(Service):
    """The scheduler as one of the gateway's services (``cron.enabled``); while it runs it is
    what the agents' cron tool and ``clawbot cron run`` reach (:mod:`~clawbot_automation.running`)."""

    name = "cron"

    def __init__(self, cron: CronConfig, running: RunningScheduler) -> None:
        self.cron = cron
        self.running = running
        self.scheduler: Scheduler | None = None

    async def run(self, host: AgentHost) -> None:
        scheduler = self.scheduler = cron_scheduler(host, self.cron)
        self.running.started(scheduler)
        try:
            await scheduler.serve()
        finally:
            self.running.stopped(scheduler)

    async def run_job_now(self, name: str) -> tuple[int, dict[str, Any]]:
        """``clawbot cron run NAME`` while this gateway runs (the control API's
        ``POST /v1/cron/NAME/run``): the HTTP status and the finished run, or the error."""
        scheduler = self.scheduler
        if scheduler is None:
            return 503, {"error": "cron jobs do not run in this gateway yet (it is starting)"}
        job = scheduler.store.get(name)
        if job is None:
            return 404, {"error": f"no cron job is named {name!r}"}
        try:
            run = await scheduler.run_now(job)
        except JobRunning as exc:
            return 409, {"error": str(exc)}
        return 200, converter.unstructure(run)

    def health(self) -> ServiceHealth:
        due = self.scheduler.next_due() if self.scheduler is not None else None
        return ServiceHealth("ok", f"next job due {due.isoformat(timespec='minutes')}" if due is not None else "no job is due")
