"""Auth profiles: several keys per provider, rotated with cooldowns, health kept on disk.

Every provider has the profile ``default`` (its own configured or environment key, passed
as ``api_key=None``) plus the ``[[auth.profiles]]`` configured for it; a provider with no key
of its own and configured profiles has only those. A profile that is
rate-limited or rejected cools down for min(1 h, 1 min x 5^(n-1)), or as long as the
provider asked (Retry-After); a billing error disables it for 5 h, growing to 24 h.
Candidates come pinned-first, then least recently used.

Health belongs to a key, not to a profile name: it is stored under a fingerprint of the key
the profile sends (a truncated SHA-256, never the key), so a key the user replaced after a
401 or a rate limit starts healthy at once.

Health is shared with other clawbot processes through ``auth-state.json``: a change is
written under the file's lock, merged into what is on disk (the other profiles' health
comes from disk, so a cooldown seen by another process is honoured here too).

The file is derived state: a malformed one is reported once and goes on without its bad
parts (an entry with a field of the wrong type, a negative or absurd count, or a cooldown
longer than the longest clawbot sets starts healthy again; unknown fields are ignored).
"""

from __future__ import annotations

import hashlib
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
#: why a profile is unusable: the error kind that set its cooldown
REASONS = ("rate_limit", "auth", "billing")


def key_fingerprint(api_key: str | None) -> str:
    """A short, one-way name of ``api_key`` ("" when the key is unknown)."""
    return hashlib.sha256(api_key.encode("utf-8")).hexdigest()[:16] if api_key else ""


@attrs.frozen
class Profile:
    provider: str
    id: str
    api_key: str | None = attrs.field(default=None, repr=False)
    #: the fingerprint of the key this profile sends (for ``default``: the provider's own key)
    fingerprint: str = attrs.field(default=attrs.Factory(lambda self: key_fingerprint(self.api_key), takes_self=True), repr=False)


@attrs.define
class Health:
    failures: int = 0
    billing_failures: int = 0
    unusable_until: float = 0.0
    last_used: float = 0.0
    reason: str = "rate_limit"  # what set the last cooldown (one of REASONS)


@attrs.frozen
class Unavailable:
    """Why and until when a profile may not be used."""

    profile: Profile
    reason: str
    until: float


class AuthProfiles:
    def __init__(
        self,
        configured: list[AuthProfileConfig],
        state_file: Path,
        clock: Callable[[], float] = time.time,
        default_key: Callable[[str], str | None] | None = None,
    ) -> None:
        self._configured = configured
        self._file = state_file
        self._clock = clock
        #: provider name -> the provider's own key (configured or environment), read at each
        #: use so a key the user changed is seen
        self._default_key = default_key or (lambda provider: None)
        self._health: dict[str, Health] = self._read()

    def profiles(self, provider: str) -> list[Profile]:
        extra = [Profile(provider, p.id, p.api_key) for p in self._configured if p.provider == provider]
        key = self._own_key(provider)
        if key == "" and extra:
            # the provider has no key of its own: a request without one would only be rejected
            # (and rest a "key" the user never gave); the configured keys serve instead
            return extra
        own = Profile(provider, DEFAULT_PROFILE, fingerprint=key_fingerprint(key))
        return [own, *extra]

    def _own_key(self, provider: str) -> str | None:
        try:
            return self._default_key(provider)
        except Exception:  # a provider that cannot say its key: its health is kept by name
            log.debug("could not read the key of %s", provider, exc_info=True)
            return None

    def candidates(self, provider: str, pinned: str | None = None) -> list[Profile]:
        """Usable profiles now: the pinned one first, then the least recently used."""
        now = self._clock()
        usable = [p for p in self.profiles(provider) if self._get(p).unusable_until <= now]
        usable.sort(key=lambda p: (p.id != pinned, self._get(p).last_used))
        return usable

    def next_available(self, provider: str) -> Unavailable | None:
        """The profile of ``provider`` that comes back first; ask when every one is unusable now."""
        soonest = min(self.profiles(provider), key=lambda p: self._get(p).unusable_until)
        health = self._get(soonest)
        return Unavailable(soonest, health.reason, health.unusable_until)

    def now(self) -> float:
        return self._clock()

    def resting(self, provider: str) -> list[Unavailable]:
        """The profiles of ``provider`` that may not be used now, why and until when (the
        health on disk counts: another process may have set the cooldown)."""
        now, stored = self._clock(), self._read()
        found = []
        for profile in self.profiles(provider):
            health = stored.get(_key(profile)) or self._get(profile)
            if health.unusable_until > now:
                found.append(Unavailable(profile, health.reason, health.unusable_until))
        return found

    def until(self, profile: Profile) -> float:
        """When ``profile`` may be used again (in the past when it may now)."""
        return self._get(profile).unusable_until

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

    def cool_down(self, profile: Profile, reason: str = "rate_limit", asked: float | None = None) -> float:
        """Rest ``profile`` after a rate limit or a rejected key: as long as the provider
        ``asked`` (Retry-After), else min(1 h, 1 min x 5^(n-1)). Returns the seconds."""
        now = self._clock()

        def change(health: Health) -> None:
            health.failures += 1
            seconds = min(COOLDOWN_MAX_S, COOLDOWN_BASE_S * 5 ** min(health.failures - 1, 8))
            if asked is not None and asked > 0:
                seconds = min(COOLDOWN_MAX_S, asked)
            health.unusable_until, health.last_used, health.reason = now + seconds, now, reason

        seconds = self._update(profile, change).unusable_until - now
        log.warning("auth profile %s/%s cooling down for %.0f s", profile.provider, profile.id, seconds)
        return seconds

    def disable_for_billing(self, profile: Profile) -> float:
        now = self._clock()

        def change(health: Health) -> None:
            health.billing_failures += 1
            seconds = min(BILLING_MAX_S, BILLING_BASE_S * 2 ** min(health.billing_failures - 1, 8))
            health.unusable_until, health.last_used, health.reason = now + seconds, now, "billing"

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
                found[key] = Health(**{name: value[name] for name in (*_COUNTS, *_TIMES, "reason") if name in value})
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
    if "reason" in value and value["reason"] not in REASONS:
        return f"reason is {shown(value['reason'])}, not one of {', '.join(REASONS)}"
    if value.get("unusable_until", 0.0) > latest:
        return "unusable_until lies further ahead than any cooldown"
    return None


def _key(profile: Profile) -> str:
    """Where the health of ``profile``'s key is stored: ``provider/id#fingerprint`` (just
    ``provider/id`` when the key is unknown)."""
    name = f"{profile.provider}/{profile.id}"
    return f"{name}#{profile.fingerprint}" if profile.fingerprint else name
