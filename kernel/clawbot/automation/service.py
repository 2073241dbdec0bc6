"""The cron scheduler as a service of ``clawbot run``, and the store every command shares."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import TYPE_CHECKING

from clawbot.automation.cron_store import CronStore
from clawbot.automation.scheduler import Scheduler
from clawbot.kernel import Kernel

if TYPE_CHECKING:
    from clawbot.agent.runtime import AgentRuntime


def cron_store(kernel: Kernel) -> CronStore:
    return CronStore(kernel.paths.root / "cron", history=kernel.config.cron.history)


def cron_scheduler(runtime: AgentRuntime) -> Scheduler:
    """A scheduler whose runs are turns of ``runtime``'s agents (not started yet)."""
    from clawbot.automation.cron_runner import run_cron_job

    kernel = runtime.kernel

    async def run_job(job, due: datetime, reason: str):  # noqa: ANN001, ANN202 - CronJob -> CronRun
        return await run_cron_job(runtime, job, due, reason)

    return Scheduler(cron_store(kernel), run_job, kernel.config.cron, kernel.config.agents.defaults.timezone)


def cron_service(runtime: AgentRuntime) -> Callable[[], Awaitable[None]] | None:
    """What the gateway runs while it serves (``None`` when ``cron.enabled`` is off); the
    scheduler is offered to the agents' tools and the control API while it runs."""
    if not runtime.kernel.config.cron.enabled:
        return None
    scheduler = cron_scheduler(runtime)

    async def serve() -> None:
        runtime.services.cron = scheduler
        try:
            await scheduler.serve()
        finally:
            if runtime.services.cron is scheduler:
                runtime.services.cron = None

    return serve
