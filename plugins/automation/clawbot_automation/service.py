"""The cron scheduler as a service of ``clawbot run``, and the store every command shares."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from clawbot.kernel import Kernel

from clawbot_automation.cron_runner import CronHost, run_cron_job
from clawbot_automation.cron_store import CronStore
from clawbot_automation.scheduler import Scheduler

if TYPE_CHECKING:
    from clawbot.agent.runtime import AgentRuntime


def cron_store(kernel: Kernel) -> CronStore:
    return CronStore(kernel.paths.root / "cron", history=kernel.config.cron.history)


def cron_scheduler(runtime: CronHost) -> Scheduler:
    """A scheduler whose runs are turns of ``runtime``'s agents (not started yet); also what
    runs a job once outside a gateway (``run_now``), with the same lock and records."""

    kernel = runtime.kernel

    async def run_job(job, due: datetime, reason: str):  # noqa: ANN001, ANN202 - CronJob -> CronRun
        return await run_cron_job(runtime, job, due, reason)

    return Scheduler(cron_store(kernel), run_job, kernel.config.cron, kernel.config.agents.defaults.timezone)


class CronService:
    """The scheduler as one of the gateway's background services (``cron.enabled``); while
    it runs it is offered to the agents' tools and the control API (``run now``)."""

    def __init__(self, runtime: AgentRuntime) -> None:
        self.runtime = runtime
        self.scheduler = cron_scheduler(runtime)

    async def serve(self, gateway: object) -> None:
        services = self.runtime.services
        services.cron = self.scheduler
        try:
            await self.scheduler.serve()
        finally:
            if services.cron is self.scheduler:
                services.cron = None
