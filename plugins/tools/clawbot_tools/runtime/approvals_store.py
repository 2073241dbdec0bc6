"""What the user allowed "always", per agent, in ``<state dir>/exec-approvals.json``.

``/approve <id> allow-always`` remembers one of two things (the approval notice says which):

* **programs**: the *resolved* executables of the command (real path plus the name it ran
  under, see :mod:`~clawbot_tools.runtime.executables`), only for programs that run no code
  from their arguments (``exec_policy.ALWAYS_OK``); from then on they run with any
  arguments, inside the sandbox, without network;
* **a command**: this exact command line, in this directory, with the same added
  environment and the same grants (network, interactive input) and the same sandbox (the
  mechanism it ran in, or "outside"); it runs again unasked only when all of that is
  identical: a command approved under bwrap asks again where only Landlock or nothing runs.

The file is read on every check (another ``clawbot`` process may have written it) and
written under the state-file lock, atomically.

Format (version 2)::

    {"version": 2, "agents": {"<agent id>": {
        "programs": [{"path": "/usr/bin/jq", "name": "jq"}],
        "commands": [{"command": "make test", "cwd": "/ws", "env": {}, "network": false,
                      "sandbox": "bwrap", "interactive": false}]}}}

An entry written before the mechanism was recorded (``"sandbox": true``) matches nothing.

Version 1 stored a plain list of programs per agent; it is still read.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from clawbot.statefile import atomic_write_json, locked

from clawbot_tools.runtime.executables import Program

log = logging.getLogger(__name__)

FILE_NAME = "exec-approvals.json"
VERSION = 2
COMMAND_KEYS = ("command", "cwd", "env", "network", "sandbox", "interactive")


class ApprovalsStore:
    """``path=None`` (no state directory): nothing can be remembered."""

    def __init__(self, path: Path | None) -> None:
        self.path = path

    @property
    def available(self) -> bool:
        return self.path is not None

    def allowed(self, agent_id: str) -> tuple[Program, ...]:
        """The programs allowed always for ``agent_id``."""
        entries = self._agent(self._read(), agent_id).get("programs", [])
        return tuple(
            Program(e["path"], e["name"]) for e in entries
            if isinstance(e, dict) and isinstance(e.get("path"), str) and isinstance(e.get("name"), str)
        )

    def remembers(self, agent_id: str, command: Mapping[str, Any]) -> bool:
        """Whether this exact command (see :data:`COMMAND_KEYS`) was allowed always."""
        wanted = _command_entry(command)
        return any(
            isinstance(e, dict) and _command_entry(e) == wanted
            for e in self._agent(self._read(), agent_id).get("commands", [])
        )

    def add(self, agent_id: str, programs: Iterable[Program]) -> None:
        entries = [{"path": program.real, "name": program.name} for program in programs]
        self._update(agent_id, "programs", entries)

    def add_command(self, agent_id: str, command: Mapping[str, Any]) -> None:
        self._update(agent_id, "commands", [_command_entry(command)])

    def _update(self, agent_id: str, kind: str, new: list[dict[str, Any]]) -> None:
        if self.path is None:
            raise RuntimeError("no state directory to remember approvals in")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with locked(self.path):
            data = self._read()
            agents = data.get("agents") if isinstance(data.get("agents"), dict) else {}
            entry = self._agent(data, agent_id)
            entries = entry.setdefault(kind, [])
            entries.extend(item for item in new if item not in entries)
            agents[agent_id] = entry
            atomic_write_json(self.path, {"version": VERSION, "agents": agents})

    @staticmethod
    def _agent(data: dict, agent_id: str) -> dict[str, list]:
        agents = data.get("agents")
        entry = agents.get(agent_id) if isinstance(agents, dict) else None
        if isinstance(entry, list):  # version 1: a list of programs
            return {"programs": list(entry), "commands": []}
        if not isinstance(entry, dict):
            return {"programs": [], "commands": []}
        return {kind: list(entry.get(kind, [])) if isinstance(entry.get(kind), list) else [] for kind in ("programs", "commands")}

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


def _command_entry(command: Mapping[str, Any]) -> dict[str, Any]:
    return {key: command.get(key) for key in COMMAND_KEYS}
