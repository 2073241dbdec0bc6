"""Auth profiles: several keys per provider, rotated with cooldowns, health kept on disk.

Every provider has the profile ``default`` (its own configured or environment key, passed
as ``api_key=None``) plus the ``[[auth.profiles]]`` configured for it. A profile that is
rate-limited or rejected cools down for min(1 h, 1 min x 5^(n-1)); a billing error disables
it for 5 h, growing to 24 h. Candidates come pinned-first, then least recently used.

Health is shared with other clawbot processes through ``auth-state.json``: a change is
written under the file's lock, merged into what is on disk (the other profiles' health
comes from disk, so a cooldown seen by another process is honoured here too).

The file is derived state: a malformed one is reported once and goes on without its bad
parts (an entry with a field of the wrong type, a negative or absurd count, or a cooldown
longer than the longest clawbot sets starts healthy again; unknown fields are ignored).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from pathlib import Path

import attrs

from clawbot.config.schema import AuthProfileConfig
from clawbot.statefile import atomic_write_json, is_count, is_number, locked, make_private_dir, read_state, report_once, shown

log = logging.getLogger(__name__)
DEFAULT_PROFILE = "default"
COOLDOWN_BASE_S = 60.0
COOLDOWN_MAX_S = 3600.0
BILLING_BASE_S = 5 * 3600.0
BILLING_MAX_S = 24 * 3600.0
MAX_FAILURES = 1000  # counted failures past this are not real: the entry is reset
_COUNTS = ("failures", "billing_failures")
_TIMES = ("unusable_until", "last_used")


@attrs.frozen
class Profile:
    provider: str
    id: str
    api_key: str | None = attrs.field(default=None, repr=False)


@attrs.define
class Health:
    failures: int = 0
    billing_failures: int = 0
    unusable_until: float = 0.0
    last_used: float = 0.0


class AuthProfiles:
    def __init__(self, configured: list[AuthProfileConfig], state_file: Path, clock: Callable[[], float] = time.time) -> None:
        self._configured = configured
        self._file = state_file
        self._clock = clock
        self._health: dict[str, Health] = self._read()

    def profiles(self, provider: str) -> list[Profile]:
        extra = [Profile(provider, p.id, p.api_key) for p in self._configured if p.provider == provider]
        return [Profile(provider, DEFAULT_PROFILE), *extra]

    def candidates(self, provider: str, pinned: str | None = None) -> list[Profile]:
        """Usable profiles now: the pinned one first, then the least recently used."""
        now = self._clock()
        usable = [p for p in self.profiles(provider) if self._get(p).unusable_until <= now]
        usable.sort(key=lambda p: (p.id != pinned, self._get(p).last_used))
        return usable

    def soonest_available(self, provider: str) -> float | None:
        waits = [self._get(p).unusable_until - self._clock() for p in self.profiles(provider)]
        return max(0.0, min(waits)) if waits else None

    def succeeded(self, profile: Profile) -> None:
        health = self._get(profile)
        recovered = health.failures > 0 or health.unusable_until > 0
        now = self._clock()

        def reset(health: Health) -> None:
            health.failures, health.unusable_until, health.last_used = 0, 0.0, now

        # last_used only orders several profiles; with one, a success changes nothing worth a
        # disk write on every model call.
        if recovered or len(self.profiles(profile.provider)) > 1:
            self._update(profile, reset)
        else:
            reset(health)

    def cool_down(self, profile: Profile) -> float:
        now = self._clock()

        def change(health: Health) -> None:
            health.failures += 1
            seconds = min(COOLDOWN_MAX_S, COOLDOWN_BASE_S * 5 ** min(health.failures - 1, 8))
            health.unusable_until, health.last_used = now + seconds, now

        seconds = self._update(profile, change).unusable_until - now
        log.warning("auth profile %s/%s cooling down for %.0f s", profile.provider, profile.id, seconds)
        return seconds

    def disable_for_billing(self, profile: Profile) -> float:
        now = self._clock()

        def change(health: Health) -> None:
            health.billing_failures += 1
            seconds = min(BILLING_MAX_S, BILLING_BASE_S * 2 ** min(health.billing_failures - 1, 8))
            health.unusable_until, health.last_used = now + seconds, now

        seconds = self._update(profile, change).unusable_until - now
        log.warning("auth profile %s/%s disabled for %.1f h (billing)", profile.provider, profile.id, seconds / 3600)
        return seconds

    def _get(self, profile: Profile) -> Health:
        return self._health.setdefault(_key(profile), Health())

    def _read(self) -> dict[str, Health]:
        # derived state: what is malformed starts healthy rather than refuse to run
        raw = read_state(self._file, "ignored: every auth profile starts healthy")
        if raw is None:
            return {}
        if not isinstance(raw, dict):
            report_once(self._file, "is not a JSON object of auth profiles; ignored: every auth profile starts healthy")
            return {}
        found: dict[str, Health] = {}
        latest = self._clock() + BILLING_MAX_S
        for key, value in raw.items():
            problem = _problem(value, latest)
            if problem is None:
                found[key] = Health(**{name: value[name] for name in (*_COUNTS, *_TIMES) if name in value})
            else:
                report_once(self._file, f"the entry for {shown(key)} is malformed ({problem}); that profile starts healthy")
        return found

    def _update(self, profile: Profile, change: Callable[[Health], None]) -> Health:
        """Apply ``change`` to the health of ``profile`` and store it, under the file's lock.

        The change applies to what is on disk (another process may have counted a failure
        too), and the other profiles' health is refreshed from disk.
        """
        make_private_dir(self._file.parent)
        key = _key(profile)
        with locked(self._file):
            merged = self._read()
            for other, health in self._health.items():  # profiles only this process knows
                merged.setdefault(other, health)
            health = merged.setdefault(key, Health())
            change(health)
            self._health = merged
            atomic_write_json(self._file, {k: attrs.asdict(v) for k, v in merged.items()})
        return health


def _problem(value: object, latest: float) -> str | None:
    """What is wrong with one stored health entry, or ``None`` when it can be used."""
    if not isinstance(value, dict):
        return f"{type(value).__name__} instead of an object"
    for name in _COUNTS:
        if name in value and not is_count(value[name], MAX_FAILURES):
            return f"{name} is {shown(value[name])}, not a count up to {MAX_FAILURES}"
    for name in _TIMES:
        if name in value and not is_number(value[name]):
            return f"{name} is {shown(value[name])}, not a time"
    if value.get("unusable_until", 0.0) > latest:
        return "unusable_until lies further ahead than any cooldown"
    return None


def _key(profile: Profile) -> str:
    return f"{profile.provider}/{profile.id}"
