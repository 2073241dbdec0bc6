"""The cron part of the tool services: the owner's main session manages the jobs.

A job runs later with its agent's tools and workspace, so a session may touch only jobs of
agents it may reach (its own; others through ``tools.agent_to_agent``), and a job must
deliver to a channel this gateway runs. A job that runs in the asking session itself is not
run from inside that session's turn (its turn would wait for this one forever).
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

import attrs
from clawbot.types import CronJob, CronRun, ServiceUnavailable
from clawbot.types.session_keys import session_kind

if TYPE_CHECKING:
    from clawbot.agent.services import SharedServices


class CronServices:
    """Mixed into :class:`~clawbot.agent.services.KernelServices`, which provides these."""

    agent_id: str
    session_key: str
    shared: SharedServices
    _kernel: Any

    def _is_main(self) -> bool:
        raise NotImplementedError

    def _agent_reachable(self, agent_id: str) -> bool:
        raise NotImplementedError

    def _cron_store(self):  # noqa: ANN202 - CronStore, imported lazily
        if not self._is_main():
            raise ServiceUnavailable(f"this is a {session_kind(self.session_key)} session: only the agent's main session may see or change cron jobs")
        from clawbot_automation.service import cron_store

        return cron_store(self._kernel)

    def _cron_changed(self) -> None:
        if self.shared.cron is not None:
            self.shared.cron.changed()

    def _job_agent(self, job: CronJob) -> str:
        return job.agent_id or self._kernel.config.default_agent_id()

    def _check_job(self, job: CronJob) -> None:
        """A job this agent may touch: its own, or another's that tools.agent_to_agent lets it
        reach (a job runs later with its agent's tools and workspace); one that delivers to a
        channel this gateway runs."""
        target = self._job_agent(job)
        if not self._agent_reachable(target):
            raise ServiceUnavailable(f"agent {self.agent_id!r} may not manage jobs of agent {target!r}; list both in tools.agent_to_agent to allow it")
        port = self.shared.port
        channel = job.deliver.partition(":")[0]
        if job.deliver and port is not None and channel not in port.channel_names():
            raise ServiceUnavailable(f"deliver: channel {channel!r} is not running (running: {', '.join(port.channel_names()) or 'none'})")

    def _reachable_job(self, name: str) -> CronJob:
        job = self._cron_store().get(name)
        if job is None or not self._agent_reachable(self._job_agent(job)):
            raise ServiceUnavailable(f"no cron job is named {name!r}")
        return job

    def cron_jobs(self) -> list[CronJob]:
        return [job for job in self._cron_store().jobs() if self._agent_reachable(self._job_agent(job))]

    def cron_add(self, job: CronJob) -> CronJob:
        from clawbot_automation.jobs import JobError, add_job

        store = self._cron_store()
        job = attrs.evolve(job, agent_id=job.agent_id or self.agent_id)
        self._check_job(job)
        try:
            now = self.shared.cron.clock() if self.shared.cron is not None else datetime.now().astimezone()
            added = add_job(store, job, self._kernel.config, now)
        except JobError as exc:
            raise ServiceUnavailable(str(exc)) from None
        self._cron_changed()
        return added

    def cron_edit(self, name: str, **changes: object) -> CronJob:
        from clawbot_automation.jobs import JobError, edit_job

        before = self._reachable_job(name)
        agent_id, deliver = changes.get("agent_id", before.agent_id), changes.get("deliver", before.deliver)
        after = attrs.evolve(
            before,
            agent_id=agent_id if isinstance(agent_id, str) else before.agent_id,
            deliver=deliver if isinstance(deliver, str) else before.deliver,
        )
        self._check_job(after)
        try:
            edited = edit_job(self._cron_store(), name, self._kernel.config, dict(changes))
        except JobError as exc:
            raise ServiceUnavailable(str(exc)) from None
        self._cron_changed()
        return edited

    def cron_remove(self, name: str) -> bool:
        self._reachable_job(name)
        from clawbot_automation.cron_store import CronStoreError

        try:
            removed = self._cron_store().remove(name)
        except CronStoreError as exc:
            raise ServiceUnavailable(str(exc)) from None
        self._cron_changed()
        return removed

    async def cron_run_now(self, name: str) -> CronRun:
        self._cron_store()  # only the main session
        job = self._reachable_job(name)
        from clawbot_automation.cron_runner import job_session

        if job_session(job, self._job_agent(job)) == self.session_key:  # its turn would wait for this one forever
            raise ServiceUnavailable(
                f"job {name!r} runs in this very session: it runs on its schedule, or with `clawbot cron run {name}` once this turn is over"
            )
        from clawbot_automation.run_lock import JobRunning
        from clawbot_automation.service import cron_scheduler

        scheduler = self.shared.cron or cron_scheduler(self.shared)  # no gateway: run here, locked and recorded alike
        try:
            return await scheduler.run_now(job)
        except JobRunning as exc:
            raise ServiceUnavailable(f"{exc}; its result shows in its run history") from None
