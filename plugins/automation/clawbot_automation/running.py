"""The cron scheduler running for a clawbot, found again by the cron tool and run-now requests.

The scheduler is the gateway's service (:class:`~clawbot_automation.service.CronService`);
the tool's capability is built per call. Both see the same :class:`~clawbot.types.AgentHost`
(one per running clawbot), so the running scheduler is filed under it: a job the tool adds
wakes the scheduler at once, and a run the tool asks for runs under the scheduler's limits.

A weak map: a host that is gone takes its entry with it. (Per-kernel plugin state has no
supported home in the plugin API yet; this is the one piece of it this plugin keeps.)
"""

from __future__ import annotations

import weakref

from clawbot.types import AgentHost

from clawbot_automation.scheduler import Scheduler


class RunningSchedulers:
    """Which scheduler runs for which host (none while no gateway runs one)."""

    def __init__(self) -> None:
        self._by_host: weakref.WeakKeyDictionary[AgentHost, Scheduler] = weakref.WeakKeyDictionary()

    def of(self, host: AgentHost) -> Scheduler | None:
        return self._by_host.get(host)

    def started(self, host: AgentHost, scheduler: Scheduler) -> None:
        self._by_host[host] = scheduler

    def stopped(self, host: AgentHost, scheduler: Scheduler) -> None:
        if self._by_host.get(host) is scheduler:
            del self._by_host[host]


RUNNING = RunningSchedulers()
