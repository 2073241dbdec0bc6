"""When a session has gone stale and the next message starts a fresh one (``session.reset``).

``daily``: a session whose last activity came before the most recent ``at_hour`` o'clock in
the user's timezone is over. That hour is found on the local calendar, so a reset at 04:00
stays at 04:00 across daylight-saving changes; an hour the clocks skip (spring forward) is
taken as the moment of the jump, and an hour that happens twice (fall back) as its first
occurrence. ``idle``: a session without a message for ``idle_minutes`` is over. All
comparisons are made in UTC, never on wall-clock times.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from clawbot.config.schema import SessionResetConfig


def last_daily_reset(now: datetime, at_hour: int, zone: ZoneInfo | None) -> datetime:
    """The most recent ``at_hour`` o'clock (user's time) at or before ``now``, in UTC."""
    local = now.astimezone(zone) if zone is not None else now.astimezone()
    today = _moment(local.date(), at_hour, zone)
    return today if today <= now.astimezone(UTC) else _moment(local.date() - timedelta(days=1), at_hour, zone)


def _moment(day: date, hour: int, zone: ZoneInfo | None) -> datetime:
    """``hour`` o'clock of the local ``day`` as a UTC instant (fold=0: the first of a repeated
    hour; a skipped hour keeps the offset before the jump, which lands on the jump itself)."""
    if zone is None:  # the machine's zone: the system's rules give that day's offset (and place a skipped hour)
        return datetime.combine(day, time(hour)).astimezone().astimezone(UTC)
    return datetime.combine(day, time(hour), tzinfo=zone).astimezone(UTC)


def stale_reason(policy: SessionResetConfig, last_activity: datetime, now: datetime, zone: ZoneInfo | None) -> str | None:
    """Why a session last active at ``last_activity`` is over at ``now`` (``None``: it is not).

    The reason goes to the ``clawbot_session_end`` and ``clawbot_session_start`` hooks.
    """
    if last_activity.tzinfo is None:
        last_activity = last_activity.replace(tzinfo=UTC)
    if policy.mode == "daily":
        boundary = last_daily_reset(now, policy.at_hour, zone)
        if last_activity.astimezone(UTC) < boundary:
            return f"daily reset at {policy.at_hour:02d}:00"
        return None
    if policy.mode == "idle" and policy.idle_minutes > 0:
        if now.astimezone(UTC) - last_activity.astimezone(UTC) >= timedelta(minutes=policy.idle_minutes):
            return f"idle for {policy.idle_minutes} minutes"
    return None
