"""Whether and how an agent's heartbeat runs: its settings, active hours and checklist.

An agent's heartbeat settings are ``agents.defaults.heartbeat`` with the agent's own
``every_minutes`` and ``model`` (``agents.list[].heartbeat``) over them, as the settings view
has them (:class:`~clawbot.types.HeartbeatSettings`). Active hours are
read in the user's time zone (``agents.defaults.timezone``); ``active_until`` before
``active_from`` spans midnight. HEARTBEAT.md is the checklist a heartbeat works through:
one with nothing to do costs no model call (:func:`checklist_empty`).
"""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path
from typing import Any

import attrs
from clawbot.types import Settings
from clawbot.workspacefiles import read_text

HEARTBEAT_FILE = "HEARTBEAT.md"
MAX_CHECKLIST_BYTES = 256 * 1024
"""A checklist is a few lines; a larger HEARTBEAT.md is not read (the heartbeat is skipped)."""


@attrs.frozen
class AgentHeartbeat:
    """One agent's heartbeat, its settings resolved (``every_minutes`` 0: off)."""

    agent_id: str
    every_minutes: int
    model: str
    prompt: str
    active_from: str
    active_until: str
    ack_max_chars: int
    target: str

    @property
    def on(self) -> bool:
        return self.every_minutes > 0


def heartbeat_agents(settings: Settings) -> list[str]:
    """The agents that may have a heartbeat: every configured one (the default agent alone
    when ``agents.list`` is empty)."""
    return settings.agent_ids() or [settings.default_agent_id]


def heartbeat_of(settings: Settings, agent_id: str) -> AgentHeartbeat:
    own = settings.heartbeat_of(agent_id)
    return AgentHeartbeat(agent_id, own.every_minutes, own.model, own.prompt, own.active_from, own.active_until, own.ack_max_chars, own.target)


def _minutes(clock: str, empty: int) -> int:
    if not clock:
        return empty
    hours, minutes = clock.split(":")
    return int(hours) * 60 + int(minutes)


def active_at(heartbeat: AgentHeartbeat, now: datetime, zone: Any) -> bool:
    """Whether ``now`` is within the active hours, on the user's clock (``zone``; ``None``:
    the machine's). Both times empty, or equal: all day."""
    local = now.astimezone(zone) if zone is not None else now.astimezone()
    minute = local.hour * 60 + local.minute
    start, end = _minutes(heartbeat.active_from, 0), _minutes(heartbeat.active_until, 24 * 60)
    if start == end:
        return True
    if start < end:
        return start <= minute < end
    return minute >= start or minute < end  # across midnight


_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
_NOTHING = re.compile(r"(#.*|[-*+]|[-*+] \[[ xX]?\]|>)?")
"""A line that asks for nothing: a heading (or a ``#`` comment line), a bare list marker or
an unticked box with no task, a bare quote marker."""


def checklist_empty(text: str | None) -> bool:
    """Whether HEARTBEAT.md (``None``: missing) asks for nothing: only blank lines, headings,
    HTML comments and bare list markers. The template ships that way, so a heartbeat makes no
    model call until the user writes a task into it."""
    if text is None:
        return True
    return all(_NOTHING.fullmatch(line.strip()) for line in _COMMENT.sub("", text).splitlines())


def read_checklist(workspace: Path) -> str | None:
    """HEARTBEAT.md's text, ``None`` when there is none. Read the one safe way
    (:mod:`clawbot.workspacefiles`): a FIFO, a link out of the workspace, a device or a file
    past :data:`MAX_CHECKLIST_BYTES` raises :class:`~clawbot.workspacefiles.FileRefused`.
    Blocking: the heartbeat service calls it in a worker thread."""
    return read_text(workspace / HEARTBEAT_FILE, workspace, max_bytes=MAX_CHECKLIST_BYTES)
