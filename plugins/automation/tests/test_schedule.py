"""Reading cron job schedules and their next due times, in time zones and across DST."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from clawbot_automation.records import CronSchedule
from clawbot_automation.schedule import ScheduleError, due_between, next_due, parse_every, validate


def utc(*parts: int) -> datetime:
    return datetime(*parts, tzinfo=UTC)


@pytest.mark.parametrize(
    ("expr", "expected"),
    [("90s", timedelta(seconds=90)), ("15m", timedelta(minutes=15)), ("2h", timedelta(hours=2)), ("1d", timedelta(days=1)), ("1h30m", timedelta(minutes=90))],
)
def test_durations(expr: str, expected: timedelta) -> None:
    assert parse_every(expr) == expected


@pytest.mark.parametrize(
    ("schedule", "named"),
    [
        (CronSchedule("every", "soon"), "every: 'soon' is not a duration"),
        (CronSchedule("every", "0m"), "is zero"),
        (CronSchedule("every", "30m1h"), "is not a duration"),
        (CronSchedule("cron", "0 9 * *"), "has 4 fields"),
        (CronSchedule("cron", "0 9 * * * *"), "has 6 fields"),
        (CronSchedule("cron", "61 9 * * *"), "cron: '61 9 * * *' is not a valid cron expression"),
        (CronSchedule("cron", "0 9 * * *", "Mars/Olympus"), "tz: 'Mars/Olympus' is not a known time zone"),
        (CronSchedule("at", "next tuesday"), "at: 'next tuesday' is not an ISO 8601 time"),
        (CronSchedule("weekly", "x"), "kind: 'weekly' is not a schedule kind"),  # type: ignore[arg-type]
    ],
)
def test_bad_schedules_are_named(schedule: CronSchedule, named: str) -> None:
    with pytest.raises(ScheduleError, match=named.replace("*", r"\*").replace("(", r"\(")):
        validate(schedule)


def test_a_bad_user_zone_names_its_key() -> None:
    with pytest.raises(ScheduleError, match="agents.defaults.timezone: 'Nowhere/Land'"):
        validate(CronSchedule("cron", "0 9 * * *"), "Nowhere/Land")


@pytest.mark.parametrize(
    ("schedule", "user_tz", "after", "expected"),
    [
        # a cron expression is wall-clock time in its zone, else the user's
        (CronSchedule("cron", "0 9 * * *", "Europe/Berlin"), "", utc(2026, 1, 15, 12), utc(2026, 1, 16, 8)),
        (CronSchedule("cron", "0 9 * * *", "Europe/Berlin"), "", utc(2026, 7, 15, 12), utc(2026, 7, 16, 7)),
        (CronSchedule("cron", "0 9 * * *"), "America/New_York", utc(2026, 1, 15, 12), utc(2026, 1, 15, 14)),
        (CronSchedule("cron", "0 9 * * 1-5"), "UTC", utc(2026, 11, 27, 10), utc(2026, 11, 30, 9)),  # Friday -> Monday
        # spring forward in Berlin (2026-03-29 02:00 -> 03:00): 02:30 runs after the skip, once
        (CronSchedule("cron", "30 2 * * *", "Europe/Berlin"), "", utc(2026, 3, 28, 12), utc(2026, 3, 29, 1, 30)),
        (CronSchedule("cron", "30 2 * * *", "Europe/Berlin"), "", utc(2026, 3, 29, 1, 30), utc(2026, 3, 30, 0, 30)),
        # fall back (2026-10-25 03:00 -> 02:00): 02:30 happens twice and runs the first time only
        (CronSchedule("cron", "30 2 * * *", "Europe/Berlin"), "", utc(2026, 10, 24, 12), utc(2026, 10, 25, 0, 30)),
        (CronSchedule("cron", "30 2 * * *", "Europe/Berlin"), "", utc(2026, 10, 25, 0, 30), utc(2026, 10, 26, 1, 30)),
        # at: an offset is kept; without one, the schedule's zone, else the user's
        (CronSchedule("at", "2026-12-01T09:00+01:00"), "", utc(2026, 11, 1), utc(2026, 12, 1, 8)),
        (CronSchedule("at", "2026-12-01T09:00Z"), "", utc(2026, 11, 1), utc(2026, 12, 1, 9)),
        (CronSchedule("at", "2026-07-01T09:00", "Asia/Tokyo"), "Europe/Berlin", utc(2026, 6, 1), utc(2026, 7, 1, 0)),
        (CronSchedule("at", "2026-07-01T09:00"), "Europe/Berlin", utc(2026, 6, 1), utc(2026, 7, 1, 7)),
        (CronSchedule("at", "2026-07-01T09:00"), "Europe/Berlin", utc(2026, 7, 2), None),  # passed: never again
        (CronSchedule("every", "1h30m"), "", utc(2026, 3, 29, 0, 45), utc(2026, 3, 29, 2, 15)),  # intervals ignore DST
    ],
)
def test_next_due(schedule: CronSchedule, user_tz: str, after: datetime, expected: datetime | None) -> None:
    assert next_due(schedule, after, user_tz) == expected


def test_every_half_hour_through_both_dst_changes_never_repeats_or_stalls() -> None:
    schedule = CronSchedule("cron", "*/30 * * * *", "Europe/Berlin")
    for start in (utc(2026, 3, 28, 22), utc(2026, 10, 24, 22)):
        times = due_between(schedule, start, start + timedelta(hours=8), limit=100)
        assert times == sorted(set(times))
        assert all(timedelta(minutes=30) <= b - a <= timedelta(minutes=90) for a, b in zip(times, times[1:], strict=False))


def test_missed_times_are_counted_and_capped() -> None:
    every = CronSchedule("every", "1m")
    start = utc(2026, 1, 1)
    assert len(due_between(every, start, start + timedelta(minutes=5))) == 5
    latest = due_between(every, start, start + timedelta(days=1), limit=10)
    assert len(latest) == 10 and latest[-1] == start + timedelta(days=1)
    daily = CronSchedule("cron", "0 9 * * *", "UTC")
    assert due_between(daily, utc(2026, 1, 1, 10), utc(2026, 1, 4, 10)) == [utc(2026, 1, 2, 9), utc(2026, 1, 3, 9), utc(2026, 1, 4, 9)]
