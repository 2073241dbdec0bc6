"""What the plugin manager remembers about each plugin and each failed hook call."""

from __future__ import annotations

from typing import Literal

import attrs

PluginStatus = Literal["loaded", "blocked", "failed"]


@attrs.define
class PluginRecord:
    """One plugin as ``clawbot plugins list`` and ``clawbot doctor`` show it."""

    name: str
    status: PluginStatus
    distribution: str | None = None
    version: str | None = None
    module: str | None = None
    hooks: list[str] = attrs.Factory(list)
    error: str | None = None
    warnings: list[str] = attrs.Factory(list)


@attrs.frozen
class HookFailure:
    """A hook implementation that raised; the call went on without it."""

    plugin: str
    hook: str
    error: str


@attrs.frozen
class Contribution:
    """One object a plugin returned from a collect-all hook, with its origin."""

    plugin: str
    value: object
