"""The user's time zone: the one clock fact shared by the prompt, the user message and tools."""

from __future__ import annotations

from datetime import datetime
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
