"""The cron capability: what the agents' ``cron`` tool may do with the owner's jobs.

A job runs later with its agent's tools and workspace, so only the agent's main session,
carrying the owner's trust, may see or change jobs; it may touch only jobs of agents it may
reach (its own; others through ``tools.agent_to_agent``), and a job must deliver to a
channel this gateway runs. A job that runs in the asking session itself is not run from
inside that session's turn (its turn would wait for this one forever).
"""

from __future__ import annotations

import abc
from datetime import datetime

import attrs
from clawbot.types import CapabilityScope, ServiceUnavailable, Settings, TurnTrust
from clawbot.types.session_keys import session_kind

from clawbot_automation.config import CronConfig
from clawbot_automation.cron_runner import job_session
from clawbot_automation.cron_store import CronStore, CronStoreError
from clawbot_automation.jobs import JobError, add_job, edit_job
from clawbot_automation.records import CronJob, CronRun
from clawbot_automation.run_lock import JobRunning
from clawbot_automation.running import RunningScheduler
from clawbot_automation.service import cron_scheduler, cron_store


class CronJobs(abc.ABC):
    """The owner's cron jobs, as one tool call may use them (``services.capability(CronJobs)``)."""

    @abc.abstractmethod
    def jobs(self) -> list[CronJob]:
        """Every job this session may see (all agents it may reach), by name."""

    @abc.abstractmethod
    def add(self, job: CronJob) -> CronJob:
        """Store a new job (its schedule checked; the name must be new); returns it as stored."""

    @abc.abstractmethod
    def edit(self, name: str, **changes: object) -> CronJob:
        """Change fields of the job ``name`` (schedule, message, deliver, enabled, ...)."""

    @abc.abstractmethod
    def remove(self, name: str) -> bool:
        """Delete the job ``name``; whether it existed."""

    @abc.abstractmethod
    async def run_now(self, name: str) -> CronRun:
        """Run the job ``name`` now (as ``manual``) and return its recorded run."""


@attrs.define
class CronAccess(CronJobs):
    """:class:`CronJobs` for one tool call's scope; refuses every call from a session that
    is not the owner's main session."""

    scope: CapabilityScope
    #: this plugin's ``[cron]`` table
    cron: CronConfig
    #: the scheduler this kernel's gateway runs (none while no gateway runs one)
    running: RunningScheduler

    @property
    def _settings(self) -> Settings:
        return self.scope.host.settings

    def _store(self) -> CronStore:
        kind = session_kind(self.scope.session_key)
        if kind != "main":
            raise ServiceUnavailable(f"this is a {kind} session: only the agent's main session may see or change cron jobs")
        if self.scope.trust is not TurnTrust.OWNER:
            # the main session, but a turn someone else started there (a member's event, a sub-agent's report)
            raise ServiceUnavailable("this turn is not the owner's: only the owner's turns may see or change cron jobs")
        return cron_store(self.scope.host.state_dir, self.cron)

    def _changed(self) -> None:
        scheduler = self.running.scheduler
        if scheduler is not None:
            scheduler.changed()

    def _job_agent(self, job: CronJob) -> str:
        return job.agent_id or self.scope.host.default_agent_id

    def _reachable(self, agent_id: str) -> bool:
        if agent_id == self.scope.agent_id:
            return True
        allowed = set(self._settings.agent_to_agent)
        return "*" in allowed or {agent_id, self.scope.agent_id} <= allowed

    def _check_job(self, job: CronJob) -> None:
        """A job this agent may touch: its own, or another's that tools.agent_to_agent lets it
        reach (a job runs later with its agent's tools and workspace); one that delivers to a
        channel this gateway runs."""
        target = self._job_agent(job)
        if not self._reachable(target):
            raise ServiceUnavailable(f"agent {self.scope.agent_id!r} may not manage jobs of agent {target!r}; list both in tools.agent_to_agent to allow it")
        host = self.scope.host
        channel = job.deliver.partition(":")[0]
        if job.deliver and host.gateway_running and channel not in host.channel_names():
            raise ServiceUnavailable(f"deliver: channel {channel!r} is not running (running: {', '.join(host.channel_names()) or 'none'})")

    def _reachable_job(self, name: str) -> CronJob:
        job = self._store().get(name)
        if job is None or not self._reachable(self._job_agent(job)):
            raise ServiceUnavailable(f"no cron job is named {name!r}")
        return job

    def jobs(self) -> list[CronJob]:
        return [job for job in self._store().jobs() if self._reachable(self._job_agent(job))]

    def add(self, job: CronJob) -> CronJob:
        store = self._store()
        job = attrs.evolve(job, agent_id=job.agent_id or self.scope.agent_id)
        self._check_job(job)
        scheduler = self.running.scheduler
        try:
            now = scheduler.clock() if scheduler is not None else datetime.now().astimezone()
            added = add_job(store, job, self._settings, now)
        except JobError as exc:
            raise ServiceUnavailable(str(exc)) from None
        self._changed()
        return added

    def edit(self, name: str, **changes: object) -> CronJob:
        before = self._reachable_job(name)
        agent_id, deliver = changes.get("agent_id", before.agent_id), changes.get("deliver", before.deliver)
        after = attrs.evolve(
            before,
            agent_id=agent_id if isinstance(agent_id, str) else before.agent_id,
            deliver=deliver if isinstance(deliver, str) else before.deliver,
        )
        self._check_job(after)
        try:
            edited = edit_job(self._store(), name, self._settings, dict(changes))
        except JobError as exc:
            raise ServiceUnavailable(str(exc)) from None
        self._changed()
        return edited

    def remove(self, name: str) -> bool:
        self._reachable_job(name)
        try:
            removed = self._store().remove(name)
        except CronStoreError as exc:
            raise ServiceUnavailable(str(exc)) from None
        self._changed()
        return removed

    async def run_now(self, name: str) -> CronRun:
        self._store()  # only the main session
        job = self._reachable_job(name)
        if job_session(job, self._job_agent(job)) == self.scope.session_key:  # its turn would wait for this one forever
            raise ServiceUnavailable(
                f"job {name!r} runs in this very session: it runs on its schedule, or with `clawbot cron run {name}` once this turn is over"
            )
        host = self.scope.host
        scheduler = self.running.scheduler or cron_scheduler(host, self.cron)  # no gateway: run here, locked and recorded alike
        try:
            return await scheduler.run_now(job)
        except JobRunning as exc:
            raise ServiceUnavailable(f"{exc}; its result shows in its run history") from None
