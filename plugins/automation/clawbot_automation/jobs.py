"""Checking and changing cron jobs, for the CLI and the agents' ``cron`` tool alike."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import attrs
from clawbot.types import Settings

from clawbot_automation.cron_runner import check_deliver
from clawbot_automation.cron_store import CronStore, CronStoreError, check_name
from clawbot_automation.records import CronJob, CronSchedule
from clawbot_automation.schedule import ScheduleError, validate

EDITABLE = ("schedule", "message", "agent_id", "session", "deliver", "enabled")


class JobError(ValueError):
    """A job that cannot be added or changed; the message names the field and the fix."""


def checked(job: CronJob, settings: Settings, now: datetime | None = None) -> CronJob:
    """``job`` when everything in it can be used; :class:`JobError` naming what cannot.
    With ``now`` (a new or rescheduled job) a schedule never due again is refused too."""
    try:
        check_name(job.name)
        validate(job.schedule, settings.timezone, now)
        check_deliver(job.deliver)
    except (ScheduleError, CronStoreError, ValueError) as exc:
        raise JobError(str(exc)) from None
    if not job.message.strip():
        raise JobError("message: a job needs a message, what its agent is asked on every run")
    if job.session not in ("isolated", "main"):
        raise JobError(f"session: {job.session!r} is not a session mode; use isolated or main")
    agents = settings.agent_ids() or [settings.default_agent_id]
    if job.agent_id and job.agent_id not in agents:
        raise JobError(f"agent: no agent {job.agent_id!r} is configured (agents: {', '.join(agents)})")
    return job


def add_job(store: CronStore, job: CronJob, settings: Settings, now: datetime) -> CronJob:
    try:
        return store.add(checked(job, settings, now), now)
    except CronStoreError as exc:
        raise JobError(str(exc)) from None


def edit_job(store: CronStore, name: str, settings: Settings, changes: dict[str, Any]) -> CronJob:
    job = store.get(name)
    if job is None:
        raise JobError(f"no cron job is named {name!r}")
    unknown = sorted(set(changes) - set(EDITABLE))
    if unknown:
        raise JobError(f"{unknown[0]}: not something a job's edit can change (it can: {', '.join(EDITABLE)})")
    if isinstance(changes.get("schedule"), dict):
        try:
            changes["schedule"] = CronSchedule(**changes["schedule"])
        except TypeError:
            raise JobError("schedule: give kind (cron, at or every), expr and optionally tz") from None
    now = datetime.now(UTC) if "schedule" in changes else None  # a new schedule must be due again
    try:
        return store.replace(checked(attrs.evolve(job, **changes), settings, now))
    except CronStoreError as exc:
        raise JobError(str(exc)) from None
