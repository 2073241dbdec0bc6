"""What ``exec`` and ``process`` share within one plugin instance.

Built once per ``clawbot_tools`` hook call from the plugin context: the settings, the
environment commands start from, the process registry, the sandbox and the "allow always"
store. The tool closures capture it; nothing lives at module level.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import attrs
from clawbot import TurnTrust

from clawbot_tools.runtime.approvals_store import FILE_NAME, ApprovalsStore
from clawbot_tools.runtime.envscrub import secret_values
from clawbot_tools.runtime.processes import ProcessRegistry

if TYPE_CHECKING:
    from clawbot_tools.config import ToolsSettings
    from clawbot_tools.runtime.sandboxing import Sandboxing


@attrs.frozen
class Job:
    """One command ready to run: what was decided on (and shown to the user) is exactly what runs."""

    command: str
    cwd: str
    env: Mapping[str, str] = attrs.field(repr=False)
    timeout_s: float
    session_key: str
    agent_id: str
    workspace: str = ""
    added_env: Mapping[str, str] = attrs.field(factory=dict)  # what the model set (shown when asking)
    readable: tuple[str, ...] = ()  # trees outside the workspace it may read (the agent's skills)
    network: bool = False
    sandboxed: bool = True
    interactive: bool = False  # approved with its input open (each write asks again)
    trust: TurnTrust = TurnTrust.OWNER  # the turn that asked for it: a non-owner's sees the workspace read-only

    @property
    def workspace_writable(self) -> bool:
        """Whether the sandbox lets it write the workspace: only in a turn of the owner."""
        return self.trust is TurnTrust.OWNER

    @property
    def grants(self) -> bool:
        """Whether it needs more than the sandbox gives every command (asks in every mode)."""
        return self.network or not self.sandboxed

    def remembered_as(self, mechanism: str) -> dict[str, object]:
        """The key "allow always" stores for this exact command (see ApprovalsStore). It names
        the sandbox mechanism the command ran in (``mechanism``; "outside" when approved to run
        outside it): under another one, or none, the same text may do more, so it asks again."""
        return {
            "command": self.command,
            "cwd": self.cwd,
            "env": dict(sorted(self.added_env.items())),
            "network": self.network,
            "sandbox": mechanism if self.sandboxed else "outside",
            "interactive": self.interactive,
        }


@attrs.frozen
class RuntimeContext:
    settings: ToolsSettings
    base_env: Mapping[str, str] = attrs.field(repr=False)
    registry: ProcessRegistry
    store: ApprovalsStore
    sandbox: Sandboxing
    secrets: tuple[str, ...] = attrs.field(repr=False)

    @property
    def exec(self):  # the [plugins.tools.exec] settings
        return self.settings.exec

    @property
    def home(self) -> str | None:
        return self.base_env.get("HOME") or None

    @classmethod
    def build(cls, settings: ToolsSettings, *, env: Mapping[str, str] | None, state_dir: Path | None) -> RuntimeContext:
        from clawbot_tools.runtime.sandboxing import Sandboxing

        base = dict(os.environ if env is None else env)
        store = ApprovalsStore(state_dir / FILE_NAME if state_dir is not None else None)
        registry = ProcessRegistry(max_per_session=settings.exec.max_processes)
        sandbox = Sandboxing(settings.exec, base.get("HOME") or None, os.fspath(state_dir) if state_dir is not None else None)
        return cls(settings, base, registry, store, sandbox, secret_values(base))

    async def aclose(self) -> None:
        """Kill what still runs, then remove the sessions' temp dirs."""
        await self.registry.aclose()
        self.sandbox.close()
