"""What time it is for the scheduler and the heartbeats: a function tests replace with a clock they move."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

Clock = Callable[[], datetime]
"""What time it is now (timezone-aware)."""


def utc_now() -> datetime:
    return datetime.now(UTC)


def user_zone(name: str) -> tzinfo | None:
    """The user's zone (``agents.defaults.timezone``); ``None``, the machine's, when unset or unknown."""
    if name:
        try:
            return ZoneInfo(name)
        except (ZoneInfoNotFoundError, ValueError):
            pass
    return None
