"""Finding plugins: entry points of the ``clawbot`` group, and deciding which are blocked."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from importlib.metadata import EntryPoint, entry_points

import attrs

ENTRY_POINT_GROUP = "clawbot"
DISABLE_ENV = "CLAWBOT_DISABLE_PLUGINS"


@attrs.frozen
class BlockRules:
    """Which plugin names may load: ``allow`` (empty = all) minus ``deny`` minus the env list."""

    allow: frozenset[str] = frozenset()
    deny: frozenset[str] = frozenset()
    disabled_by_env: frozenset[str] = frozenset()

    @classmethod
    def build(cls, allow: Iterable[str] = (), deny: Iterable[str] = (), env: Mapping[str, str] | None = None) -> BlockRules:
        env = os.environ if env is None else env
        disabled = {n.strip() for n in env.get(DISABLE_ENV, "").split(",") if n.strip()}
        return cls(frozenset(allow), frozenset(deny), frozenset(disabled))

    def reason_blocked(self, name: str) -> str | None:
        if name in self.disabled_by_env:
            return f"disabled by {DISABLE_ENV}"
        if name in self.deny:
            return "listed in plugins.deny"
        if self.allow and name not in self.allow:
            return "not listed in plugins.allow"
        return None


def discover_entry_points() -> list[EntryPoint]:
    """Every entry point of the ``clawbot`` group, sorted by name for a stable order."""
    return sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda ep: ep.name)
