"""Which bootstrap files a turn changed, told to the user in a notice from clawbot.

AGENTS.md, SOUL.md, MEMORY.md and the other files ``clawbot_bootstrap_files`` lists go into
every later system prompt, and a model steered by a web page, a file or a chat message can
rewrite them with any tool (write, edit, apply_patch, a shell command). So the user is told:
the files are looked at when a turn starts and again when it ends, whatever ran in between,
and each changed file is reported with the lines added and removed and the first few of
them (escaped and cut short).

Looking is cheap: a file is read and hashed only when its ``stat`` (size, modification and
change times, inode) differs from the last time it was read, so an unchanged file costs a
``stat`` per look. A rewrite that keeps the size and lands within the same clock tick as the
previous write would leave the ``stat`` unchanged, so (as git does for its index) a file
modified less than :data:`RACY_NS` before it was read is read again every time.

The files are the ones the hook lists for the agent's main session (the widest set: it
includes MEMORY.md, which a group turn must not change unseen either), plus any the hook
lists only at the end (a file created during the turn). Lines of a file the session's own
prompt does not load (MEMORY.md in a group) are not shown there, only counted. The line
counts compare the two versions as multisets of lines: linear in the file's size whatever a
model writes, and a moved line is not a change.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import stat
import time
from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from clawbot.agent.notices import quoted, quoted_line
from clawbot.sessions.keys import session_kind
from clawbot.types import BootstrapContext, BootstrapFile, InboundMessage

if TYPE_CHECKING:
    from clawbot.agent.runtime import AgentRuntime

log = logging.getLogger(__name__)

RACY_NS = 2_000_000_000
"""A file modified this recently before it was read may change again without its stat showing it."""
MAX_COMPARED_BYTES = 256 * 1024
"""Larger files are compared by size, time and inode only, and reported without lines."""
SHOWN_LINES = 6
LINE_CHARS = 120
HEADER = "Files that shape the agent changed during this turn:"


StatKey = tuple[int, int, int, int]  # size, mtime_ns, ctime_ns, inode


@attrs.frozen
class FileState:
    fingerprint: str  # a hash of the content, or the stat of a file too large to read
    size: int
    lines: tuple[str, ...] | None  # None: too large to compare line by line
    stat_key: StatKey = (0, 0, 0, 0)
    read_at_ns: int = 0

    def settled(self) -> bool:
        """Whether the stat proves the content: it was last modified well before it was read."""
        return max(self.stat_key[1], self.stat_key[2]) < self.read_at_ns - RACY_NS


StateCache = dict[Path, FileState]
"""The last state read of each file, reused while its ``stat`` is unchanged."""


@attrs.frozen
class FileChange:
    name: str
    before: FileState | None  # None: missing (or not yet a bootstrap file)
    after: FileState | None  # None: deleted
    lines_shown: bool


def _stat_key(info: os.stat_result) -> StatKey:
    return (info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino)


def read_state(path: Path) -> FileState | None:
    """The state of a regular file, or ``None`` when there is none (or it cannot be read)."""
    read_at = time.time_ns()
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
        with os.fdopen(fd, "rb") as handle:
            info = os.fstat(handle.fileno())
            if not stat.S_ISREG(info.st_mode):
                return None
            key = _stat_key(info)
            if info.st_size > MAX_COMPARED_BYTES:
                return FileState(f"stat:{key}", info.st_size, None, key, read_at)
            data = handle.read(MAX_COMPARED_BYTES + 1)
    except OSError:
        return None
    if len(data) > MAX_COMPARED_BYTES:  # it grew while we looked
        return FileState(f"stat:{key}", len(data), None, key, read_at)
    lines = data.decode("utf-8", errors="replace").split("\n")
    if lines[-1] == "":
        lines.pop()
    return FileState(hashlib.sha256(data).hexdigest(), len(data), tuple(lines), key, read_at)


def current_state(path: Path, cache: StateCache) -> FileState | None:
    """``read_state``, skipped while the file's ``stat`` matches the state last read."""
    try:
        info = os.stat(path)
    except OSError:
        info = None
    known = cache.get(path)
    if info is not None and known is not None and _stat_key(info) == known.stat_key and known.settled():
        return known
    state = read_state(path)
    if state is None:
        cache.pop(path, None)
    else:
        cache[path] = state
    return state


def listed_files(kernel: Any, agent_id: str, workspace: Path, kind: str) -> dict[Path, str]:
    """What ``clawbot_bootstrap_files`` lists for a session of ``kind``: path -> name."""
    try:
        result = kernel.plugins.bootstrap_files(BootstrapContext(agent_id, workspace, kind, kernel.config))
    except Exception:  # recorded against the plugin when the prompt is built
        return {}
    found: dict[Path, str] = {}
    for item in result:
        if isinstance(item, BootstrapFile) and isinstance(item.name, str) and isinstance(item.path, str | os.PathLike):
            found[Path(item.path)] = item.name
    return found


def _unmatched(lines: tuple[str, ...], other: tuple[str, ...]) -> list[str]:
    """The lines of ``lines`` left over once each line of ``other`` has cancelled one copy."""
    left = Counter(other)
    out = []
    for line in lines:
        if left[line] > 0:
            left[line] -= 1
        else:
            out.append(line)
    return out


def _shown(line: str) -> str:
    cut = line[:LINE_CHARS] + ("…" if len(line) > LINE_CHARS else "")
    return quoted(cut)


def describe(change: FileChange) -> list[str]:
    """The notice's lines for one changed file."""
    name = quoted_line(change.name)
    before, after = change.before, change.after
    if after is None:
        had = f" (it had {len(before.lines)} lines)" if before is not None and before.lines is not None else ""
        return [f"{name}: deleted{had}"]
    if after.lines is None or (before is not None and before.lines is None):
        return [f"{name}: changed ({before.size if before else 0} -> {after.size} bytes)"]
    removed = _unmatched(before.lines if before else (), after.lines)
    added = _unmatched(after.lines, before.lines if before else ())
    head = f"{name}: +{len(added)} -{len(removed)} lines"
    if not change.lines_shown:
        return [f"{head} (not shown in this chat)"]
    changed = [f"  - {_shown(line)}" for line in removed] + [f"  + {_shown(line)}" for line in added]
    more = len(changed) - SHOWN_LINES
    return [head, *changed[:SHOWN_LINES], *([f"  … and {more} more changed lines"] if more > 0 else [])]


@attrs.define
class BootstrapWatch:
    """The bootstrap files of one agent as a turn found them."""

    kernel: Any
    agent_id: str
    workspace: Path
    session_key: str
    cache: StateCache = attrs.Factory(dict)
    before: dict[Path, FileState | None] = attrs.Factory(dict)

    @classmethod
    def start(cls, kernel: Any, agent_id: str, workspace: Path, session_key: str, cache: StateCache | None = None) -> BootstrapWatch:
        watch = cls(kernel, agent_id, workspace, session_key, {} if cache is None else cache)
        watch.before = {path: current_state(path, watch.cache) for path in listed_files(kernel, agent_id, workspace, "main")}
        return watch

    def changes(self) -> list[FileChange]:
        names = listed_files(self.kernel, self.agent_id, self.workspace, "main")
        kind = session_kind(self.session_key)
        shown = set(names) if kind == "main" else set(listed_files(self.kernel, self.agent_id, self.workspace, kind))
        found = []
        for path in dict.fromkeys([*self.before, *names]):
            before, after = self.before.get(path), current_state(path, self.cache)
            if (before and before.fingerprint) == (after and after.fingerprint):
                continue
            found.append(FileChange(names.get(path, path.name), before, after, path in shown))
        return found

    def notice(self) -> str | None:
        changes = self.changes()
        if not changes:
            return None
        return "\n".join([HEADER, *(line for change in changes for line in describe(change))])


async def deliver(runtime: AgentRuntime | None, origin: InboundMessage | None, session_key: str, text: str) -> None:
    """Send the notice to the chat the turn came from (a CLI run prints it itself)."""
    port = runtime.port if runtime is not None else None
    if port is None or origin is None:
        return
    try:
        await port.deliver(origin.answer(text), session_key, notice=True)
    except Exception:
        log.exception("telling %s about changed bootstrap files failed", session_key)


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
    runtime: AgentRuntime | None,
    origin: InboundMessage | None,
    cache: StateCache | None = None,
) -> AsyncIterator[Watching]:
    """Around one turn: afterwards ``notices`` holds the report, already sent to the chat.

    A turn that ends in an error or is stopped still reports what it changed (in the
    background: the turn's own task is going away). ``cache`` carries what was read from
    one turn to the next (the agent's conversation keeps it).
    """
    watch = BootstrapWatch.start(kernel, agent_id, workspace, session_key, cache)
    watching = Watching()
    try:
        yield watching
    except BaseException:
        text = watch.notice()
        if text and runtime is not None:
            runtime.spawn(deliver(runtime, origin, session_key, text), name=f"bootstrap-notice:{session_key}")
        raise
    text = watch.notice()
    if text:
        watching.notices = (text,)
        await deliver(runtime, origin, session_key, text)
