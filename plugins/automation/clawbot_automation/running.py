"""The cron scheduler running for a clawbot, found again by the cron tool and run-now requests.

The scheduler is the gateway's service (:class:`~clawbot_automation.service.CronService`);
the tool's capability is built per call. Both come from this plugin's hooks of one kernel,
so the running scheduler is kept in the plugin's per-kernel state (``ctx.state``): a job the
tool adds wakes the scheduler at once, and a run the tool asks for runs under the
scheduler's limits. Another kernel in the process (a test, an embedder) has its own.
"""

from __future__ import annotations

from typing import Any

from clawbot_automation.scheduler import Scheduler

_KEY = "running_scheduler"


class RunningScheduler:
    """The scheduler that runs in this kernel's gateway now (none while no gateway runs one)."""

    def __init__(self) -> None:
        self.scheduler: Scheduler | None = None

    def started(self, scheduler: Scheduler) -> None:
        self.scheduler = scheduler

    def stopped(self, scheduler: Scheduler) -> None:
        if self.scheduler is scheduler:
            self.scheduler = None


def running_scheduler(state: dict[str, Any]) -> RunningScheduler:
    """The kernel's :class:`RunningScheduler`, kept in this plugin's ``ctx.state``."""
    running: RunningScheduler = state.setdefault(_KEY, RunningScheduler())
    return running
