"""Reading a cron job's schedule and working out when it is next due.

Three kinds (:class:`~clawbot.types.CronSchedule`):

* ``cron``: a five-field expression (minute hour day-of-month month day-of-week), read in
  the schedule's zone (else the user's, ``agents.defaults.timezone``). Wall-clock times:
  ``0 9 * * *`` is 09:00 local in winter and in summer. A time the clocks skip (spring
  forward) runs when the clocks have moved on (02:30 becomes 03:30); a time that happens
  twice (fall back) runs once, the first time.
* ``at``: one ISO 8601 time (``2026-12-01T09:00``, ``2026-12-01T09:00+01:00``); without an
  offset it is read in the schedule's zone, else the user's.
* ``every``: a duration (``90s``, ``15m``, ``2h``, ``1d``, ``1h30m``), counted from the
  previous run (from when the job was added, for the first).
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from clawbot_automation.records import CronSchedule

_DURATION = re.compile(r"(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?")
MAX_EVERY = timedelta(days=366)


class ScheduleError(ValueError):
    """A schedule clawbot cannot read; the message names what is wrong and how to write it."""


def parse_every(expr: str) -> timedelta:
    """``90s``, ``15m``, ``2h``, ``1d`` or a combination in that order (``1d2h``, ``1h30m``)."""
    text = expr.strip().lower()
    found = _DURATION.fullmatch(text) if text else None
    if found is None or not any(found.groups()):
        raise ScheduleError(f"every: {expr!r} is not a duration; write it like 90s, 15m, 2h, 1d or 1h30m")
    days, hours, minutes, seconds = (int(part or 0) for part in found.groups())
    try:
        every = timedelta(days=days, hours=hours, minutes=minutes, seconds=seconds)
    except OverflowError:
        raise ScheduleError(f"every: {expr!r} is longer than a year; use --cron or --at for rare runs") from None
    if every <= timedelta(0):
        raise ScheduleError(f"every: {expr!r} is zero; a job needs at least 1s between runs")
    if every > MAX_EVERY:
        raise ScheduleError(f"every: {expr!r} is longer than a year; use --cron or --at for rare runs")
    return every


def zone_of(schedule: CronSchedule, user_tz: str = "") -> ZoneInfo | None:
    """The schedule's zone, else the user's; ``None``: the machine's local zone."""
    for name, what in ((schedule.tz, "tz"), (user_tz, "agents.defaults.timezone")):
        if name:
            try:
                return ZoneInfo(name)
            except (ZoneInfoNotFoundError, ValueError):
                raise ScheduleError(f"{what}: {name!r} is not a known time zone; use an IANA name such as Europe/Berlin or UTC") from None
    return None


def parse_at(expr: str, zone: ZoneInfo | None) -> datetime:
    """The instant an ``at`` schedule names (timezone-aware)."""
    text = expr.strip()
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        raise ScheduleError(f"at: {expr!r} is not an ISO 8601 time; write it like 2026-12-01T09:00 or 2026-12-01T09:00+01:00") from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=zone) if zone is not None else when.astimezone()
    return when


def _check_cron(expr: str) -> None:
    from croniter import croniter

    fields = expr.split()
    if len(fields) != 5:
        raise ScheduleError(f"cron: {expr!r} has {len(fields)} fields; a cron expression has five: minute hour day-of-month month day-of-week")
    if not croniter.is_valid(expr):
        try:
            croniter(expr)
        except Exception as exc:  # croniter's own message says which field is wrong
            raise ScheduleError(f"cron: {expr!r} is not a valid cron expression: {exc}") from None
        raise ScheduleError(f"cron: {expr!r} is not a valid cron expression")


def validate(schedule: CronSchedule, user_tz: str = "", now: datetime | None = None) -> None:
    """Raise :class:`ScheduleError` when ``schedule`` cannot be read, or (with ``now``) will
    never be due: an ``at`` time already past, a date no calendar has (``0 0 30 2 *``)."""
    zone = zone_of(schedule, user_tz)
    if schedule.kind == "cron":
        _check_cron(schedule.expr)
    elif schedule.kind == "at":
        parse_at(schedule.expr, zone)
    elif schedule.kind == "every":
        parse_every(schedule.expr)
    else:
        raise ScheduleError(f"kind: {schedule.kind!r} is not a schedule kind; use cron, at or every")
    if now is not None and safe_next_due(schedule, now, user_tz) is None:
        if schedule.kind == "at" and parse_at(schedule.expr, zone) <= now:
            raise ScheduleError(f"at: {schedule.expr!r} has already passed (now is {now.astimezone(zone or UTC).isoformat(timespec='minutes')})")
        raise ScheduleError(f"{schedule.kind}: {schedule.expr!r} is never due (no such date)")


def safe_next_due(schedule: CronSchedule, after: datetime, user_tz: str = "") -> datetime | None:
    """:func:`next_due`, with a schedule that cannot be computed (an impossible date, a time
    past the calendar's end) read as never due instead of raising."""
    try:
        return next_due(schedule, after, user_tz)
    except ScheduleError:
        raise
    except Exception:  # croniter's "no next date", an overflow far in the future
        return None


def next_due(schedule: CronSchedule, after: datetime, user_tz: str = "") -> datetime | None:
    """The first time strictly after ``after`` (aware) that ``schedule`` is due, in UTC;
    ``None`` when it is never due again (an ``at`` time that has passed)."""
    zone = zone_of(schedule, user_tz)
    if schedule.kind == "every":
        return (after + parse_every(schedule.expr)).astimezone(UTC)
    if schedule.kind == "at":
        when = parse_at(schedule.expr, zone)
        return when.astimezone(UTC) if when > after else None
    return _next_cron(schedule.expr, after, zone)


def _next_cron(expr: str, after: datetime, zone: ZoneInfo | None) -> datetime:
    """Wall-clock stepping: the next matching local time after ``after``'s local time, then
    placed on the timeline (a skipped local time lands after the skip, see the module)."""
    from croniter import croniter

    local = after.astimezone(zone) if zone is not None else after.astimezone()
    wall = local.replace(tzinfo=None)
    candidate = croniter(expr, wall).get_next(datetime)
    tzinfo = zone if zone is not None else local.tzinfo
    placed = candidate.replace(tzinfo=tzinfo, fold=0)
    if zone is None:  # the machine's zone: a fixed offset of now, good enough without a zone name
        placed = candidate.astimezone()
    result = placed.astimezone(UTC)
    if result <= after:  # a repeated local hour: its second pass is already behind us
        return _next_cron(expr, (candidate + timedelta(minutes=1)).replace(tzinfo=tzinfo, fold=1), zone)
    return result


def due_between(schedule: CronSchedule, start: datetime, end: datetime, user_tz: str = "", limit: int = 1000) -> list[datetime]:
    """The times ``schedule`` was due after ``start`` up to and including ``end`` (at most
    ``limit``, the latest kept): what was missed while clawbot was not running."""
    if schedule.kind == "every":
        every = parse_every(schedule.expr)
        count = int((end - start) / every)
        first = max(1, count - limit + 1)
        return [(start + every * n).astimezone(UTC) for n in range(first, count + 1)]
    found: list[datetime] = []
    cursor = start
    for _ in range(limit * 10):
        due = next_due(schedule, cursor, user_tz)
        if due is None or due > end:
            break
        found.append(due)
        cursor = due
    return found[-limit:]
