"""The session index of one agent: session key -> current session id, totals and settings.

It is derived data: written atomically (unique temp file + rename, mode 0600) after
turns (those of one loop tick together, :mod:`clawbot.sessions.batch`), kept parsed while
unchanged on disk (:mod:`clawbot.sessions.indexfile`), and rebuilt from the transcripts' headers when it is missing or unreadable. Several
processes may share it: a read-modify-write holds :meth:`SessionIndex.locked`.

A turn touches one entry, so the file is handled as raw JSON objects and only that entry
is converted to and from :class:`SessionInfo` (converting all of them each turn made a
turn 1 ms slower with 200 sessions in the index).

A malformed file or entry (a field of the wrong type, a negative or absurd number, a session
id that is not a plain name) is reported once and rebuilt from the transcripts; the other
entries are kept.
"""

from __future__ import annotations

import contextlib
import json
import logging
import re
from collections.abc import Iterator
from pathlib import Path

import attrs
import cattrs

from clawbot.sessions.indexfile import MISSING, IndexFile
from clawbot.sessions.scan import MAX_HEADER, turn_records
from clawbot.statefile import is_count, is_number, locked, make_private_dir, report_once, shown
from clawbot.types import Usage

log = logging.getLogger(__name__)
#: what a session id may be: it names the transcript file, so never a path
SESSION_ID = re.compile(r"[A-Za-z0-9_-]{1,128}")
_TEXTS = ("created_at", "updated_at")
_OPTIONAL_TEXTS = ("model", "thinking", "auth_profile")
_USAGE = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")
REBUILDING = "rebuilding it from the transcripts"


@attrs.define
class SessionInfo:
    key: str
    session_id: str
    created_at: str
    updated_at: str
    model: str | None = None
    thinking: str | None = None
    turns: int = 0
    usage: Usage = attrs.field(factory=Usage)
    cost_usd: float | None = None
    auth_profile: str | None = None  # the profile that last worked: the session sticks to it
    model_override: str | None = None  # chosen with /model for this session: used, never fallen back from
    #: the last turn a person (or another agent) started, not one of clawbot's system events:
    #: what the idle and daily resets count from. ``None`` in an entry written before it was
    #: kept: ``updated_at`` stands in.
    last_user_at: str | None = None
    #: what the chat set with /think, /verbose, /reasoning, /usage (:mod:`clawbot.sessions.settings`)
    settings: dict[str, str] = attrs.field(factory=dict)
    #: the heartbeat turns among ``turns`` and their part of ``usage`` (reported apart)
    heartbeats: int = 0
    heartbeat_usage: Usage = attrs.field(factory=Usage)

    @property
    def last_person_activity(self) -> str:
        return self.last_user_at or self.updated_at


class SessionIndex:
    def __init__(self, directory: Path, converter: cattrs.Converter) -> None:
        self.directory = directory
        self.path = directory / "sessions.json"
        self._conv = converter
        self._file = IndexFile(self.path, REBUILDING)

    def read(self) -> dict[str, SessionInfo]:
        """Every entry (for listings); a turn uses :meth:`entry` and :meth:`put`."""
        raw = self.read_raw()
        found: dict[str, SessionInfo] = {}
        rebuilt: dict[str, SessionInfo] | None = None
        for key in raw:
            info = self._structure(key, raw[key])
            if info is None:
                rebuilt = self.rebuild() if rebuilt is None else rebuilt
                info = rebuilt.get(key)
            if info is not None:
                found[key] = info
        return found

    def read_raw(self) -> dict[str, dict]:
        """The entries as JSON objects, rebuilt from the transcripts when missing or unreadable."""
        # Parsed once per change of the file (IndexFile pins the inode, so a rename by
        # another process is always seen: under the lock, its newest state is what is read).
        raw = self._file.read()
        if raw is MISSING:
            rebuilt = self.rebuild() if any(self.directory.glob("*.jsonl")) else {}
        else:
            if isinstance(raw, dict):
                return raw  # entries are checked one by one as they are used (entry, read)
            if raw is not None:
                report_once(self.path, f"is not a JSON object of session entries; {REBUILDING}")
            rebuilt = self.rebuild()
        return {key: self._conv.unstructure(info) for key, info in rebuilt.items()}

    def entry(self, key: str, raw: dict[str, dict] | None = None) -> SessionInfo | None:
        """One entry, converted alone; a malformed one is rebuilt from its transcript."""
        raw = self.read_raw() if raw is None else raw
        if key not in raw:
            return None
        info = self._structure(key, raw[key])
        return self.rebuild(key).get(key) if info is None else info

    def _structure(self, key: str, value: object) -> SessionInfo | None:
        """The entry as :class:`SessionInfo`; ``None`` (reported once) when it is malformed."""
        problem = entry_problem(key, value)
        if problem is None:
            try:
                return self._conv.structure(value, SessionInfo)
            except Exception as exc:  # noqa: BLE001 - any shape the checks above missed
                problem = type(exc).__name__
        report_once(self.path, f"the entry for {shown(key)} is malformed ({problem}); rebuilding it from its transcript")
        return None

    def write_raw(self, raw: dict[str, dict]) -> None:
        make_private_dir(self.directory)
        self._file.write(dict(sorted(raw.items())))

    def put(self, raw: dict[str, dict], info: SessionInfo) -> None:
        """Set ``info`` in ``raw`` and write it (hold :meth:`locked` since the read)."""
        raw[info.key] = self._conv.unstructure(info)
        self.write_raw(raw)

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """Hold this (not reentrant) around a read-modify-write: other processes wait."""
        make_private_dir(self.directory)
        with locked(self.path):
            yield

    def write(self, sessions: dict[str, SessionInfo]) -> None:
        """Replace every entry (hold :meth:`locked`)."""
        self.write_raw({k: self._conv.unstructure(v) for k, v in sessions.items()})

    def rebuild(self, only: str | None = None) -> dict[str, SessionInfo]:
        """The newest transcript of each key becomes its current session.

        Its turns, usage, cost, model and auth profile are summed from its ``turn`` entries
        (for ``only`` that key's, when given: finding one entry need not read every file).

        A transcript whose header is unreadable or not a session header is skipped with a
        warning; one that vanishes meanwhile (deleted by another process) is ignored.
        """
        dated: list[tuple[float, Path]] = []
        for path in self.directory.glob("*.jsonl"):
            try:
                dated.append((path.stat().st_mtime, path))
            except OSError:  # vanished between the glob and the stat
                continue
        found: dict[str, SessionInfo] = {}
        paths: dict[str, Path] = {}
        for _, path in sorted(dated, key=lambda pair: pair[0]):
            try:
                # bytes: a stray non-UTF-8 byte further on must not hide the header
                with path.open("rb") as handle:
                    header = json.loads(handle.readline(MAX_HEADER))
            except FileNotFoundError:
                continue
            except Exception as exc:  # noqa: BLE001 - whatever the first line holds
                report_once(path, f"skipped while rebuilding the session index: unreadable header ({type(exc).__name__})")
                continue
            if not isinstance(header, dict) or header.get("type") != "session":
                report_once(path, "skipped while rebuilding the session index: no session header")
                continue
            key, session_id = header.get("key"), header.get("id")
            if not isinstance(key, str) or not key or not isinstance(session_id, str) or not SESSION_ID.fullmatch(session_id):
                report_once(path, "skipped while rebuilding the session index: the header lacks a key or id")
                continue
            stamp = header.get("timestamp")
            stamp = stamp if isinstance(stamp, str) else ""
            found[key] = SessionInfo(key, session_id, stamp, stamp, last_user_at=stamp)
            paths[key] = path
        for key, info in found.items():
            if only is None or key == only:
                self._count_turns(info, paths[key])
        return found

    def _count_turns(self, info: SessionInfo, path: Path) -> None:
        """Totals, model, auth profile and the last person's turn from the transcript's ``turn``
        entries (one per turn; a system event's is marked ``system_event``)."""
        try:
            with path.open("rb") as handle:
                for record in turn_records(handle):
                    usage = record.get("usage", {})
                    cost = record.get("cost_usd")
                    if (
                        not isinstance(usage, dict)
                        or not all(is_count(usage.get(name, 0)) for name in _USAGE)
                        or (cost is not None and not is_number(cost, high=1e12))
                    ):
                        report_once(path, "a turn entry with malformed totals is left out of the rebuilt session index")
                        continue
                    info.turns += 1
                    info.usage = info.usage + Usage(*(usage.get(name, 0) for name in _USAGE))
                    if record.get("kind") == "heartbeat":
                        info.heartbeats += 1
                        info.heartbeat_usage = info.heartbeat_usage + Usage(*(usage.get(name, 0) for name in _USAGE))
                    if cost is not None:
                        info.cost_usd = (info.cost_usd or 0.0) + cost
                    for name in ("timestamp", *_OPTIONAL_TEXTS):
                        value = record.get(name)
                        if isinstance(value, str):
                            setattr(info, "updated_at" if name == "timestamp" else name, value)
                    if record.get("system_event") is not True and isinstance(record.get("timestamp"), str):
                        info.last_user_at = record["timestamp"]
        except OSError:  # vanished or unreadable meanwhile: the header's entry is still usable
            pass

    def write_failed(self, error: OSError) -> None:
        """After a failed write (disk full): drop the file so the next reader rebuilds it.

        The turn is in its transcript; an old ``sessions.json`` left in place would miss it for
        good. Deleting needs no space, and the rebuild (on the next read) counts the turn
        entries, so the next successful write stores the repaired index.
        """
        self._file.forget()
        with contextlib.suppress(OSError):
            self.path.unlink()
        report_once(self.path, f"cannot be written ({error.strerror or error}); it is rebuilt from the transcripts on the next turn")


def entry_problem(key: str, value: object) -> str | None:
    """What is wrong with one stored entry, or ``None`` when it can be used."""
    if not isinstance(value, dict):
        return f"{type(value).__name__} instead of an object"
    if value.get("key") != key:
        return f"key is {shown(value.get('key'))}, not the key it is stored under"
    session_id = value.get("session_id")
    if not isinstance(session_id, str) or not SESSION_ID.fullmatch(session_id):
        return f"session_id is {shown(session_id)}, not a session id"
    for name in _TEXTS:
        if not isinstance(value.get(name), str):
            return f"{name} is {shown(value.get(name))}, not text"
    for name in (*_OPTIONAL_TEXTS, "model_override", "last_user_at"):
        if not isinstance(value.get(name), (str, type(None))):
            return f"{name} is {shown(value.get(name))}, not text"
    settings = value.get("settings", {})
    if not isinstance(settings, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in settings.items()):
        return f"settings is {shown(settings)}, not an object of words"
    for counted in ("turns", "heartbeats"):
        if counted in value and not is_count(value[counted]):
            return f"{counted} is {shown(value[counted])}, not a count"
    for field in ("usage", "heartbeat_usage"):
        usage = value.get(field, {})
        if not isinstance(usage, dict):
            return f"{field} is {shown(usage)}, not an object"
        for name in _USAGE:
            if name in usage and not is_count(usage[name]):
                return f"{field}.{name} is {shown(usage[name])}, not a count"
    cost = value.get("cost_usd")
    if cost is not None and not is_number(cost, high=1e12):
        return f"cost_usd is {shown(cost)}, not an amount"
    return None
