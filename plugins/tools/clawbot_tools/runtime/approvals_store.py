"""Executables the user allowed "always", per agent, in ``<state dir>/exec-approvals.json``.

``/approve <id> allow-always`` remembers the *resolved* executables of the approved command
(real path plus the name it ran under, see :mod:`~clawbot_tools.runtime.executables`),
not the command text: the next command using the same programs runs without asking. The
file is read on every check (another ``clawbot`` process may have written it) and written
under the state-file lock, atomically.

Format: ``{"version": 1, "agents": {"<agent id>": [{"path": "/usr/bin/make", "name": "make"}]}}``.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable
from pathlib import Path

from clawbot.statefile import atomic_write_json, locked

from clawbot_tools.runtime.executables import Program

log = logging.getLogger(__name__)

FILE_NAME = "exec-approvals.json"
VERSION = 1


class ApprovalsStore:
    """``path=None`` (no state directory): nothing can be remembered."""

    def __init__(self, path: Path | None) -> None:
        self.path = path

    @property
    def available(self) -> bool:
        return self.path is not None

    def allowed(self, agent_id: str) -> tuple[Program, ...]:
        agents = self._read().get("agents", {})
        entries = agents.get(agent_id, []) if isinstance(agents, dict) else []
        return tuple(
            Program(e["path"], e["name"]) for e in entries
            if isinstance(e, dict) and isinstance(e.get("path"), str) and isinstance(e.get("name"), str)
        )

    def add(self, agent_id: str, programs: Iterable[Program]) -> None:
        if self.path is None:
            raise RuntimeError("no state directory to remember approvals in")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with locked(self.path):
            data = self._read()
            agents = data.setdefault("agents", {})
            entries = agents.setdefault(agent_id, [])
            for program in programs:
                entry = {"path": program.real, "name": program.name}
                if entry not in entries:
                    entries.append(entry)
            data["version"] = VERSION
            atomic_write_json(self.path, data)

    def _read(self) -> dict:
        if self.path is None:
            return {}
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError):
            log.warning("%s is unreadable; treating it as empty", self.path)
            return {}
        return data if isinstance(data, dict) else {}
