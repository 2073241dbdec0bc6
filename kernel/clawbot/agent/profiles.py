"""Auth profiles: several keys per provider, rotated with cooldowns, health kept on disk.

Every provider has the profile ``default`` (its own configured or environment key, passed
as ``api_key=None``) plus the ``[[auth.profiles]]`` configured for it. A profile that is
rate-limited or rejected cools down for min(1 h, 1 min x 5^(n-1)); a billing error disables
it for 5 h, growing to 24 h. Candidates come pinned-first, then least recently used.

Health is shared with other clawbot processes through ``auth-state.json``: a change is
written under the file's lock, merged into what is on disk (the other profiles' health
comes from disk, so a cooldown seen by another process is honoured here too).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from pathlib import Path

import attrs

from clawbot.config.schema import AuthProfileConfig
from clawbot.statefile import atomic_write_json, locked, make_private_dir

log = logging.getLogger(__name__)
DEFAULT_PROFILE = "default"
COOLDOWN_BASE_S = 60.0
COOLDOWN_MAX_S = 3600.0
BILLING_BASE_S = 5 * 3600.0
BILLING_MAX_S = 24 * 3600.0


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
            seconds = min(COOLDOWN_MAX_S, COOLDOWN_BASE_S * 5 ** (health.failures - 1))
            health.unusable_until, health.last_used = now + seconds, now

        seconds = self._update(profile, change).unusable_until - now
        log.warning("auth profile %s/%s cooling down for %.0f s", profile.provider, profile.id, seconds)
        return seconds

    def disable_for_billing(self, profile: Profile) -> float:
        now = self._clock()

        def change(health: Health) -> None:
            health.billing_failures += 1
            seconds = min(BILLING_MAX_S, BILLING_BASE_S * 2 ** (health.billing_failures - 1))
            health.unusable_until, health.last_used = now + seconds, now

        seconds = self._update(profile, change).unusable_until - now
        log.warning("auth profile %s/%s disabled for %.1f h (billing)", profile.provider, profile.id, seconds / 3600)
        return seconds

    def _get(self, profile: Profile) -> Health:
        return self._health.setdefault(_key(profile), Health())

    def _read(self) -> dict[str, Health]:
        try:
            raw = json.loads(self._file.read_text(encoding="utf-8"))
            return {key: Health(**value) for key, value in raw.items()}
        except FileNotFoundError:
            return {}
        except Exception as exc:  # derived state: start over rather than refuse to run
            log.warning("ignoring unreadable %s: %s", self._file, exc)
            return {}

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


def _key(profile: Profile) -> str:
    return f"{profile.provider}/{profile.id}"
