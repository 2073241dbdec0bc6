"""Is a session stale at a given moment? The daily and idle reset rules, across time zones,
daylight-saving changes, midnight and the edges of the reset hour."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from clawbot.config.schema import SessionResetConfig
from clawbot.sessions.reset_policy import last_daily_reset, stale_reason

NY, PARIS, LONDON = ZoneInfo("America/New_York"), ZoneInfo("Europe/Paris"), ZoneInfo("Europe/London")
KIRITIMATI, LA = ZoneInfo("Pacific/Kiritimati"), ZoneInfo("America/Los_Angeles")


def at(zone: ZoneInfo, *parts: int, fold: int = 0) -> datetime:
    return datetime(*parts, tzinfo=zone, fold=fold)


def utc(*parts: int) -> datetime:
    return datetime(*parts, tzinfo=UTC)


DAILY = [
    # (why, at_hour, zone, last activity, now, stale)
    ("one minute before the hour, then on the hour", 4, PARIS, at(PARIS, 2024, 6, 1, 3, 59), at(PARIS, 2024, 6, 1, 4, 0), True),
    ("on the hour, then one minute before the next", 4, PARIS, at(PARIS, 2024, 6, 1, 4, 0), at(PARIS, 2024, 6, 2, 3, 59), False),
    ("across midnight, reset at 4", 4, PARIS, at(PARIS, 2024, 6, 1, 23, 50), at(PARIS, 2024, 6, 2, 0, 10), False),
    ("across midnight, reset at midnight", 0, PARIS, at(PARIS, 2024, 6, 1, 23, 59, 59), at(PARIS, 2024, 6, 2, 0, 0), True),
    ("reset at 23, just before and after", 23, PARIS, at(PARIS, 2024, 6, 1, 22, 59), at(PARIS, 2024, 6, 1, 23, 0, 1), True),
    ("days ago", 4, PARIS, at(PARIS, 2024, 5, 20, 12, 0), at(PARIS, 2024, 6, 1, 2, 0), True),
    ("last activity in the future (a clock set back)", 4, PARIS, at(PARIS, 2024, 6, 2, 12, 0), at(PARIS, 2024, 6, 1, 12, 0), False),
    # New York springs forward at 02:00 on 10 March 2024: 02:00 never happens, the reset is at the jump.
    ("skipped hour: before the jump", 2, NY, at(NY, 2024, 3, 10, 1, 30), at(NY, 2024, 3, 10, 1, 59), False),
    ("skipped hour: at the jump", 2, NY, at(NY, 2024, 3, 10, 1, 59), at(NY, 2024, 3, 10, 3, 0), True),
    # New York falls back at 02:00 on 3 November 2024: 01:00-01:59 happens twice; one reset, at the first.
    ("repeated hour: the first 01:00", 1, NY, at(NY, 2024, 11, 3, 0, 59), at(NY, 2024, 11, 3, 1, 0), True),
    ("repeated hour: the second 01:30 is no new day", 1, NY, at(NY, 2024, 11, 3, 1, 30), at(NY, 2024, 11, 3, 1, 30, fold=1), False),
    # London springs forward at 01:00 UTC on 31 March 2024; a 04:00 reset stays at 04:00 local.
    ("London, the night of the change, before 04:00 BST", 4, LONDON, at(LONDON, 2024, 3, 30, 12, 0), utc(2024, 3, 31, 2, 59), False),
    ("London, the night of the change, 04:00 BST", 4, LONDON, at(LONDON, 2024, 3, 30, 12, 0), utc(2024, 3, 31, 3, 0), True),
    # The same two instants are 03:00 -> 04:00 in Kiritimati (UTC+14), the day before in Los Angeles.
    ("UTC+14 crosses its 04:00", 4, KIRITIMATI, utc(2024, 6, 1, 13, 0), utc(2024, 6, 1, 14, 0), True),
    ("UTC-7 does not", 4, LA, utc(2024, 6, 1, 13, 0), utc(2024, 6, 1, 14, 0), False),
]


@pytest.mark.parametrize(("why", "hour", "zone", "last", "now", "stale"), DAILY, ids=[row[0] for row in DAILY])
def test_daily(why: str, hour: int, zone: ZoneInfo, last: datetime, now: datetime, stale: bool) -> None:
    policy = SessionResetConfig(mode="daily", at_hour=hour)
    reason = stale_reason(policy, last, now, zone)
    assert (reason is not None) == stale
    if stale:
        assert reason == f"daily reset at {hour:02d}:00"


def test_the_boundary_of_a_skipped_hour_is_the_jump() -> None:
    assert last_daily_reset(at(NY, 2024, 3, 10, 12, 0), 2, NY) == utc(2024, 3, 10, 7, 0)  # 03:00 EDT
    assert last_daily_reset(at(NY, 2024, 11, 3, 12, 0), 1, NY) == utc(2024, 11, 3, 5, 0)  # the first 01:00 (EDT)


NOW = utc(2024, 11, 3, 6, 20)  # 01:20 EST in New York, after the clocks went back
IDLE = [
    # (why, idle_minutes, last activity, stale)
    ("a minute short", 60, NOW - timedelta(minutes=59), False),
    ("exactly the limit", 60, NOW - timedelta(minutes=60), True),
    ("over it", 60, NOW - timedelta(minutes=61), True),
    # 01:30 EDT was 50 minutes before 01:20 EST: the wall clock went back, time did not.
    ("across the fall-back hour, under", 60, at(NY, 2024, 11, 3, 1, 30), False),
    ("across the fall-back hour, over", 45, at(NY, 2024, 11, 3, 1, 30), True),
    ("a naive time is UTC", 60, datetime(2024, 11, 3, 5, 0), True),
    ("last activity in the future", 1, NOW + timedelta(hours=1), False),
]


@pytest.mark.parametrize(("why", "minutes", "last", "stale"), IDLE, ids=[row[0] for row in IDLE])
def test_idle(why: str, minutes: int, last: datetime, stale: bool) -> None:
    reason = stale_reason(SessionResetConfig(mode="idle", idle_minutes=minutes), last, NOW, NY)
    assert (reason is not None) == stale
    if stale:
        assert reason == f"idle for {minutes} minutes"


def test_off_never_ends_a_session() -> None:
    assert stale_reason(SessionResetConfig(), utc(2000, 1, 1), NOW, NY) is None
    assert stale_reason(SessionResetConfig(mode="off", idle_minutes=1), utc(2000, 1, 1), NOW, None) is None


def test_without_a_configured_zone_the_machines_zone_and_its_rules_are_used(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", "America/New_York")
    time.tzset()
    try:
        assert last_daily_reset(utc(2024, 1, 15, 16, 0), 4, None) == utc(2024, 1, 15, 9, 0)  # 04:00 EST
        assert last_daily_reset(utc(2024, 7, 1, 16, 0), 4, None) == utc(2024, 7, 1, 8, 0)  # 04:00 EDT
        assert last_daily_reset(utc(2024, 7, 1, 7, 0), 4, None) == utc(2024, 6, 30, 8, 0)  # 03:00 EDT: yesterday's
    finally:
        monkeypatch.undo()
        time.tzset()
