"""What the user allowed "always", per agent, in ``<state dir>/exec-approvals.json``.

``/approve <id> allow-always`` remembers one of two things (the approval notice says which):

* **programs**: the *resolved* executables of the command (real path plus the name it ran
  under, see :mod:`~clawbot_tools.runtime.executables`), only for programs that run no code
  from their arguments (``exec_policy.ALWAYS_OK``); from then on they run with any
  arguments, inside the sandbox, without network;
* **a command**: this exact command line, in this directory, with the same added
  environment and the same grants (network, interactive input) and the same sandbox (the
  mechanism it ran in, or "outside"), and the files it runs or names that the agent can
  rewrite, by content (:mod:`~clawbot_tools.runtime.bound_files`); it runs again unasked
  only when all of that is identical: a command approved under bwrap asks again where only
  Landlock or nothing runs, and ``python3 build.py`` asks again once ``build.py`` changed.

The file is read on every check (another ``clawbot`` process may have written it) and
written under the state-file lock, atomically.

Format (version 3)::

    {"version": 3, "agents": {"<agent id>": {
        "programs": [{"path": "/usr/bin/jq", "name": "jq"}],
        "commands": [{"command": "make test", "cwd": "/ws", "env": {}, "network": false,
                      "sandbox": "bwrap", "interactive": false,
                      "files": {"/ws/Makefile": "sha256:9f2c..."}}]}}}

A command allowed again replaces its entry (the files as they are now). An entry written
before the mechanism was recorded (``"sandbox": true``) matches nothing. An entry written
before the files were recorded (version 2, no ``"files"``) is read as binding no files: a
command that runs or names a workspace file asks again.

Version 1 stored a plain list of programs per agent; it is still read.

A malformed file never stops exec: what is unreadable or of the wrong type (an agent entry
that is not an object, a program without a text path, a command whose fields have the wrong
types) is reported once and ignored, so that command asks again; the good entries keep
working, and the next "allow always" writes the file back without the bad ones.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from clawbot.statefile import atomic_write_json, locked, make_private_dir, read_state, report_once, shown

from clawbot_tools.runtime.executables import Program

log = logging.getLogger(__name__)

FILE_NAME = "exec-approvals.json"
VERSION = 3
COMMAND_KEYS = ("command", "cwd", "env", "network", "sandbox", "interactive")
IGNORED = "ignored: what it allowed asks again"


class ApprovalsStore:
    """``path=None`` (no state directory): nothing can be remembered."""

    def __init__(self, path: Path | None) -> None:
        self.path = path

    @property
    def available(self) -> bool:
        return self.path is not None

    def allowed(self, agent_id: str) -> tuple[Program, ...]:
        """The programs allowed always for ``agent_id``."""
        entries = self._read().get(agent_id, {}).get("programs", [])
        return tuple(Program(e["path"], e["name"]) for e in entries)

    def remembered(self, agent_id: str, command: Mapping[str, Any]) -> list[dict[str, str] | None]:
        """The files bound to each approval of this exact command (see :data:`COMMAND_KEYS`)
        for ``agent_id``: path -> state; ``None`` for an entry written before files were bound."""
        wanted = _command_entry(command)
        return [e.get("files") for e in self._read().get(agent_id, {}).get("commands", []) if _command_entry(e) == wanted]

    def add(self, agent_id: str, programs: Iterable[Program]) -> None:
        entries = [{"path": program.real, "name": program.name} for program in programs]
        self._update(agent_id, "programs", entries)

    def add_command(self, agent_id: str, command: Mapping[str, Any], files: Mapping[str, str]) -> None:
        """Remember ``command`` with the files it runs as they are now (replacing an older approval of it)."""
        self._update(agent_id, "commands", [{**_command_entry(command), "files": dict(sorted(files.items()))}], replace=True)

    def _update(self, agent_id: str, kind: str, new: list[dict[str, Any]], *, replace: bool = False) -> None:
        if self.path is None:
            raise RuntimeError("no state directory to remember approvals in")
        make_private_dir(self.path.parent)  # the state dir, when this creates it: private
        with locked(self.path):
            agents = self._read()  # only the good entries: the bad ones are dropped for good
            entry = agents.setdefault(agent_id, {"programs": [], "commands": []})
            entries = entry[kind]
            if replace:
                keys = [_command_entry(item) for item in new]
                entries[:] = [item for item in entries if _command_entry(item) not in keys]
            entries.extend(item for item in new if item not in entries)
            atomic_write_json(self.path, {"version": VERSION, "agents": agents})

    def _read(self) -> dict[str, dict[str, list[dict[str, Any]]]]:
        """Agent id -> its well-formed programs and commands; every bad part reported once."""
        if self.path is None:
            return {}
        data = read_state(self.path, IGNORED)
        if data is None:
            return {}
        agents = data.get("agents") if isinstance(data, dict) else None
        if not isinstance(agents, dict):
            report_once(self.path, f"holds no object of agents; {IGNORED}")
            return {}
        found = {}
        for agent_id, entry in agents.items():
            if isinstance(entry, list):  # version 1: a list of programs
                entry = {"programs": entry}
            if not isinstance(entry, dict):
                report_once(self.path, f"the entry of agent {shown(agent_id)} is {shown(entry)}, not an object; {IGNORED}")
                continue
            found[agent_id] = {kind: self._good(agent_id, kind, entry.get(kind, [])) for kind in ("programs", "commands")}
        return found

    def _good(self, agent_id: str, kind: str, entries: object) -> list[dict[str, Any]]:
        if not isinstance(entries, list):
            report_once(self.path, f"{kind} of agent {shown(agent_id)} is {shown(entries)}, not a list; {IGNORED}")
            return []
        check = _program_problem if kind == "programs" else _command_problem
        good = []
        for item in entries:
            problem = check(item)
            if problem is None:
                good.append(item)
            else:
                report_once(self.path, f"an entry of {kind} of agent {shown(agent_id)} is malformed ({problem}); {IGNORED}")
        return good


def _program_problem(item: object) -> str | None:
    if not isinstance(item, dict):
        return f"{shown(item)} is not an object"
    for name in ("path", "name"):
        if not isinstance(item.get(name), str):  # any text: it is compared, never opened
            return f"{name} is {shown(item.get(name))}, not text"
    return None


def _command_problem(item: object) -> str | None:
    if not isinstance(item, dict):
        return f"{shown(item)} is not an object"
    for name in ("command", "cwd"):
        if not isinstance(item.get(name), str):
            return f"{name} is {shown(item.get(name))}, not text"
    env = item.get("env")
    if not isinstance(env, dict) or not all(isinstance(v, str) for v in env.values()):
        return f"env is {shown(env)}, not an object of texts"
    for name in ("network", "interactive"):
        if not isinstance(item.get(name), bool):
            return f"{name} is {shown(item.get(name))}, not true or false"
    if not isinstance(item.get("sandbox"), (str, bool)):  # true: written before the mechanism was named
        return f"sandbox is {shown(item.get('sandbox'))}, not a sandbox name"
    files = item.get("files", {})  # absent: written before files were bound
    if not isinstance(files, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in files.items()):
        return f"files is {shown(files)}, not an object of texts"
    return None


def _command_entry(command: Mapping[str, Any]) -> dict[str, Any]:
    return {key: command.get(key) for key in COMMAND_KEYS}
