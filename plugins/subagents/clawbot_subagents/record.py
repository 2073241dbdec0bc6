"""The sub-agents running, on disk: the next gateway announces each one a crash or a stop cut off.

A sub-agent runs inside the process that started it, and ends with it. Without a record its
parent's chat never heard of it again: the result it waited for was simply lost. So each run
is written to ``<state>/gateway/subagents.json`` (private) when it starts and removed when
it ends; ``clawbot run`` takes what is left at its start (:meth:`SubagentRecord.take_cut_off`)
and tells each parent chat that its sub-agent was interrupted. A run of another process
still alive (``clawbot agent`` beside the gateway) is not taken. An unreadable file, or an
entry of the wrong shape, is reported once and dropped.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import attrs
from clawbot import InboundMessage
from clawbot.statefile import atomic_write_json, locked, make_private_dir, read_state, report_once

UNREADABLE = "ignored: sub-agents a restart cut off are not announced"


@attrs.frozen
class CutOff:
    """A sub-agent that was running when its process ended."""

    run_id: str
    agent_id: str
    session_key: str
    task: str
    parent_session_key: str
    parent_origin: InboundMessage | None


def _alive(pid: Any) -> bool:
    if not isinstance(pid, int) or pid <= 0 or pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@attrs.define
class SubagentRecord:
    path: Path

    def _entries(self) -> dict[str, Any]:
        data = read_state(self.path, UNREADABLE)
        if data is None:
            return {}
        if not isinstance(data, dict):
            report_once(self.path, f"is not a JSON object; {UNREADABLE}")
            return {}
        return data

    def _write(self, entries: dict[str, Any]) -> None:
        atomic_write_json(self.path, entries, durable=True)

    def started(self, run_id: str, agent_id: str, session_key: str, task: str, parent_session_key: str, parent_origin: InboundMessage | None) -> None:
        make_private_dir(self.path.parent)
        origin = attrs.evolve(parent_origin, text="", attachments=(), mentions=()).as_json() if parent_origin is not None else None
        with locked(self.path):
            entries = self._entries()
            entries[run_id] = {
                "pid": os.getpid(),
                "agent_id": agent_id,
                "session_key": session_key,
                "task": task,
                "parent_session_key": parent_session_key,
                "parent_origin": origin,
            }
            self._write(entries)

    def ended(self, run_id: str) -> None:
        if not self.path.exists():
            return
        with locked(self.path):
            entries = self._entries()
            if entries.pop(run_id, None) is not None:
                self._write(entries)

    def take_cut_off(self, running: frozenset[str] = frozenset()) -> list[CutOff]:
        """The runs whose process is gone, removed from the file; ``running``: the run ids
        this process runs now (never cut off, whatever their pid says)."""
        if not self.path.exists():
            return []
        cut_off: list[CutOff] = []
        with locked(self.path):
            entries = self._entries()
            for run_id, entry in list(entries.items()):
                if run_id in running or (isinstance(entry, dict) and _alive(entry.get("pid"))):
                    continue
                del entries[run_id]
                try:
                    cut_off.append(_cut_off(run_id, entry))
                except (ValueError, TypeError) as exc:
                    report_once(self.path, f"the entry of sub-agent {run_id[:40]!r} is not usable ({exc}); {UNREADABLE}")
            self._write(entries)
        return cut_off


def _cut_off(run_id: str, entry: Any) -> CutOff:
    if not isinstance(entry, dict):
        raise ValueError("not an object")
    fields = {}
    for name in ("agent_id", "session_key", "task", "parent_session_key"):
        if not isinstance(entry.get(name), str):
            raise ValueError(f"{name} is not a string")
        fields[name] = entry[name]
    origin = entry.get("parent_origin")
    return CutOff(run_id, parent_origin=InboundMessage.from_json(origin) if origin is not None else None, **fields)
