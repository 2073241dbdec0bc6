"""What ``exec`` and ``process`` share within one plugin instance.

Built once per ``clawbot_tools`` hook call from the plugin context: the settings, the
environment commands start from, the process registry and the "allow always" store.
The tool closures capture it; nothing lives at module level.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import attrs

from clawbot_tools.runtime.approvals_store import FILE_NAME, ApprovalsStore
from clawbot_tools.runtime.envscrub import secret_values
from clawbot_tools.runtime.processes import ProcessRegistry

if TYPE_CHECKING:
    from clawbot_tools.config import ToolsSettings


@attrs.frozen
class Job:
    """One command ready to run: what was decided on is exactly what runs."""

    command: str
    cwd: str
    env: Mapping[str, str] = attrs.field(repr=False)
    timeout_s: float
    session_key: str
    agent_id: str


@attrs.frozen
class RuntimeContext:
    settings: ToolsSettings
    base_env: Mapping[str, str] = attrs.field(repr=False)
    registry: ProcessRegistry
    store: ApprovalsStore
    secrets: tuple[str, ...] = attrs.field(repr=False)

    @property
    def exec(self):  # the [plugins.tools.exec] settings
        return self.settings.exec

    @property
    def home(self) -> str | None:
        return self.base_env.get("HOME") or None

    @classmethod
    def build(cls, settings: ToolsSettings, *, env: Mapping[str, str] | None, state_dir: Path | None) -> RuntimeContext:
        base = dict(os.environ if env is None else env)
        store = ApprovalsStore(state_dir / FILE_NAME if state_dir is not None else None)
        registry = ProcessRegistry(max_per_session=settings.exec.max_processes)
        return cls(settings, base, registry, store, secret_values(base))
