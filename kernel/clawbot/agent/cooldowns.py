"""What the user reads when a key rests: the real cause (rate limit, rejected key, billing)
and until when, in local time and as a duration."""

from __future__ import annotations

import math
import time

from clawbot.auth_profiles import Profile
from clawbot.types import ProviderError

_CAUSES = {
    "rate_limit": "The model provider is rate-limiting requests ({who}). This key is not used again until {at}.",
    "auth": "The model provider rejected the API key ({who}). Check the key (clawbot doctor); this key is not "
    "tried again until {at}, a changed key is used at once.",
    "billing": "The model provider refused the request for billing reasons ({who}). Check your plan or credits; this key is not tried again until {at}.",
}


class KeyResting(ProviderError):
    """A provider error whose key now rests: the message says why and until when."""

    def __init__(self, kind: str, profile: Profile, until: float, now: float, cause: ProviderError | None = None) -> None:
        detail = cause.detail if cause is not None else f"every key of {profile.provider} is resting"
        super().__init__(
            kind,  # type: ignore[arg-type]  # one of REASONS, all ProviderError kinds
            detail,
            status=cause.status if cause is not None else None,
            retry_after=cause.retry_after if cause is not None else None,
            provider=profile.provider,
        )
        self.profile = profile
        self.until = until
        self.now = now

    @property
    def user_message(self) -> str:
        who = f"{self.profile.provider}, key {self.profile.id}"
        return _CAUSES[self.kind].format(who=who, at=until_text(self.until, self.now))


def until_text(until: float, now: float) -> str:
    """``14:03:12 (in 45 s)``: the local time, with the date when it is not today."""
    local, today = time.localtime(until), time.localtime(now)
    same_day = (local.tm_year, local.tm_yday) == (today.tm_year, today.tm_yday)
    at = time.strftime("%H:%M:%S" if same_day else "%Y-%m-%d %H:%M:%S", local)
    return f"{at} (in {duration_text(until - now)})"


def duration_text(seconds: float) -> str:
    seconds = max(1, math.ceil(seconds))
    if seconds < 60:
        return f"{seconds} s"
    minutes = math.ceil(seconds / 60)
    if minutes < 60:
        return f"{minutes} min"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes} min" if minutes else f"{hours} h"
