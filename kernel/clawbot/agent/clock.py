"""The user's time zone and the current time: the clock facts shared by the prompt, the user
message, tools, the memory flush's date and the session reset policy."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError


def user_timezone(name: str) -> tuple[ZoneInfo | None, str]:
    """The configured zone, or the machine's local zone when unset or unknown."""
    if name:
        try:
            return ZoneInfo(name), name
        except (ZoneInfoNotFoundError, ValueError):
            pass
    local = datetime.now().astimezone().tzinfo
    return None, str(local) if local else "UTC"


Clock = Callable[[], datetime]
"""What time it is now (timezone-aware); tests give a conversation a clock they move."""


def utc_now() -> datetime:
    return datetime.now(UTC)


def local_date(now: datetime, zone: ZoneInfo | None) -> str:
    """``now``'s date (YYYY-MM-DD) where the user lives (``zone``; ``None``: the machine's zone)."""
    return (now.astimezone(zone) if zone is not None else now.astimezone()).strftime("%Y-%m-%d")
