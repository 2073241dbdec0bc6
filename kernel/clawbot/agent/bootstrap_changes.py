"""Which bootstrap files a turn changed, told to the user in a notice from clawbot.

AGENTS.md, SOUL.md, MEMORY.md and the other files ``clawbot_bootstrap_files`` lists go into
every later system prompt, and a model steered by a web page, a file or a chat message can
rewrite them with any tool (write, edit, apply_patch, a shell command). So the user is told:
the files are looked at when a turn starts and again when it ends, whatever ran in between,
and each changed file is reported with the lines added and removed and the first few of
them (escaped and cut short).

Looking is cheap (a ``stat`` per file while it is unchanged) and confined: a file that now
leads outside the workspace is reported as such, never read (:mod:`clawbot.agent.file_states`).

The files are the ones the hook lists for the agent's main session (the widest set: it
includes MEMORY.md, which a group turn must not change unseen either), plus any the hook
lists only at the end (a file created during the turn). Lines of a file the session's own
prompt does not load (MEMORY.md in a group) are not shown there, only counted. The line
counts compare the two versions as multisets of lines: linear in the file's size whatever a
model writes, and a moved line is not a change.

The workspace's skills feed every later prompt too (their names and descriptions), so the
``SKILL.md`` of each skill folder the agent reads from inside the workspace is watched the
same way, and an added, changed or removed skill is reported in the same notice
(:mod:`clawbot.agent.skill_changes`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import attrs

from clawbot.agent.file_states import MAX_COMPARED_BYTES, FileChange, FileState, StateCache, current_state, line_changes
from clawbot.agent.notices import quoted, quoted_line
from clawbot.agent.services import SharedServices
from clawbot.agent.skill_changes import describe_skill, shown_path, skill_files
from clawbot.sessions.keys import session_kind
from clawbot.types import BootstrapFile, InboundMessage, SessionKind

log = logging.getLogger(__name__)

__all__ = ["HEADER", "LINE_CHARS", "MAX_COMPARED_BYTES", "SHOWN_LINES", "watching_bootstrap_files"]

SHOWN_LINES = 6
LINE_CHARS = 120
HEADER = "Files that shape the agent changed during this turn:"


def listed_files(kernel: Any, agent_id: str, workspace: Path, kind: SessionKind) -> dict[Path, str]:
    """What ``clawbot_bootstrap_files`` lists for a session of ``kind``: path -> name."""
    try:
        result = kernel.plugins.bootstrap_files(kernel.bootstrap_context(agent_id, workspace, kind))
    except Exception:  # recorded against the plugin when the prompt is built
        return {}
    found: dict[Path, str] = {}
    for item in result:
        if isinstance(item, BootstrapFile) and isinstance(item.name, str) and isinstance(item.path, str | os.PathLike):
            found[Path(item.path)] = item.name
    return found


def _shown(line: str) -> str:
    cut = line[:LINE_CHARS] + ("…" if len(line) > LINE_CHARS else "")
    return quoted(cut)


def describe(change: FileChange) -> list[str]:
    """The notice's lines for one changed file."""
    if change.skill:
        return describe_skill(change)
    name = quoted_line(change.name)
    after = change.after
    before = None if change.before is None or change.before.refused else change.before  # nothing of it was shown
    if after is None:
        had = f" (it had {len(before.lines)} lines)" if before is not None and before.lines is not None else ""
        return [f"{name}: deleted{had}"]
    if after.refused:
        return [f"{name}: now {after.refused} (not shown)"]
    if after.lines is None or (before is not None and before.lines is None):
        return [f"{name}: changed ({before.size if before else 0} -> {after.size} bytes)"]
    added, removed = line_changes(before, after)
    head = f"{name}: +{len(added)} -{len(removed)} lines"
    if not change.lines_shown:
        return [f"{head} (not shown in this chat)"]
    changed = [f"  - {_shown(line)}" for line in removed] + [f"  + {_shown(line)}" for line in added]
    more = len(changed) - SHOWN_LINES
    return [head, *changed[:SHOWN_LINES], *([f"  … and {more} more changed lines"] if more > 0 else [])]


@attrs.define
class BootstrapWatch:
    """The bootstrap files and workspace skills of one agent as a turn found them."""

    kernel: Any
    agent_id: str
    workspace: Path
    session_key: str
    cache: StateCache = attrs.Factory(dict)
    before: dict[Path, FileState | None] = attrs.Factory(dict)
    skills_before: frozenset[Path] = frozenset()

    @classmethod
    def start(cls, kernel: Any, agent_id: str, workspace: Path, session_key: str, cache: StateCache | None = None) -> BootstrapWatch:
        watch = cls(kernel, agent_id, workspace, session_key, {} if cache is None else cache)
        skills = skill_files(kernel, agent_id, workspace)
        watch.skills_before = frozenset(skills)
        paths = [*listed_files(kernel, agent_id, workspace, "main"), *skills]
        watch.before = {path: current_state(path, workspace, watch.cache) for path in paths}
        return watch

    def changes(self) -> list[FileChange]:
        names = listed_files(self.kernel, self.agent_id, self.workspace, "main")
        kind = session_kind(self.session_key)
        shown = set(names) if kind == "main" else set(listed_files(self.kernel, self.agent_id, self.workspace, kind))
        skills = skill_files(self.kernel, self.agent_id, self.workspace)
        found = []
        for path in dict.fromkeys([*self.before, *names, *skills]):
            before, after = self.before.get(path), current_state(path, self.workspace, self.cache)
            if (before and before.fingerprint) == (after and after.fingerprint):
                continue
            if path in names:
                found.append(FileChange(names[path], before, after, path in shown))
            elif path in skills or path in self.skills_before:
                found.append(FileChange(skills.get(path) or shown_path(path, self.workspace), before, after, True, skill=True))
            else:  # no longer listed by the hook
                found.append(FileChange(path.name, before, after, path in shown))
        return found

    def notice(self) -> str | None:
        changes = self.changes()
        if not changes:
            return None
        return "\n".join([HEADER, *(line for change in changes for line in describe(change))])


@attrs.define
class Watching:
    notices: tuple[str, ...] = ()


@contextlib.asynccontextmanager
async def watching_bootstrap_files(
    kernel: Any,
    agent_id: str,
    workspace: Path,
    session_key: str,
    *,
    services: SharedServices | None,
    origin: InboundMessage | None,
    cache: StateCache | None = None,
) -> AsyncIterator[Watching]:
    """Around one turn: afterwards ``notices`` holds the report, already sent to the chat.

    A turn that ends in an error or is stopped still reports what it changed (in the
    background: the turn's own task is going away). ``cache`` carries what was read from
    one turn to the next (the agent's conversation keeps it).
    """
    # The files are read in a worker thread, never on the event loop (see clawbot.workspacefiles).
    watch = await asyncio.to_thread(BootstrapWatch.start, kernel, agent_id, workspace, session_key, cache)
    watching = Watching()
    try:
        yield watching
    except BaseException:
        if services is not None:
            services.spawn(_tell_changes(watch, services, origin, session_key), name=f"bootstrap-notice:{session_key}")
        raise
    text = await asyncio.to_thread(watch.notice)
    if text:
        watching.notices = (text,)
        if services is not None:
            await services.tell_chat(origin, session_key, text)


async def _tell_changes(watch: BootstrapWatch, services: SharedServices, origin: InboundMessage | None, session_key: str) -> None:
    text = await asyncio.to_thread(watch.notice)
    if text:
        await services.tell_chat(origin, session_key, text)
