"""Cron jobs and their runs as the jobs file and the run histories keep them.

A cron job's schedule is ``cron`` (a five-field expression, read in ``tz``), ``at`` (one
ISO 8601 time; a time without an offset is read in ``tz``) or ``every`` (a duration such as
``90s``, ``15m``, ``2h``, ``1d``). ``session`` is ``isolated`` (each run in the job's own
``agent:<id>:cron:<name>`` session) or ``main`` (the agent's main session). ``deliver``
names where the run's reply goes (``<channel>:<target>``, e.g. ``telegram:123456``);
empty: nowhere but the run's own session. A run whose delivery fails is a failed run.
"""

from __future__ import annotations

from typing import Literal

import attrs

ScheduleKind = Literal["cron", "at", "every"]
CronSession = Literal["isolated", "main"]
CronRunStatus = Literal["ok", "failed", "skipped", "running", "interrupted"]


@attrs.frozen
class CronSchedule:
    kind: ScheduleKind
    expr: str
    tz: str = ""
    """An IANA zone (``Europe/Berlin``); empty: the user's (``agents.defaults.timezone``)."""


@attrs.frozen
class CronJob:
    name: str
    schedule: CronSchedule
    message: str
    agent_id: str = ""
    """Empty: the default agent."""
    session: CronSession = "isolated"
    deliver: str = ""
    enabled: bool = True
    created_at: str = ""


@attrs.frozen
class CronRun:
    """One run of a job, as its history keeps it. ``delivered`` is ``None`` when the job
    delivers nowhere; ``status`` is ``failed`` when the turn or the delivery failed,
    ``running`` from before the run starts until it ends, ``interrupted`` when the process
    running it was killed (found so by the next one)."""

    job: str
    run_id: str
    scheduled_at: str
    started_at: str
    finished_at: str = ""
    status: CronRunStatus = "ok"
    delivered: bool | None = None
    error: str = ""
    session_key: str = ""
    reason: str = ""
    """Why it ran: ``schedule``, ``catch-up`` (missed while clawbot was down), ``retry`` (an
    interrupted run run again at start-up), ``manual``."""
