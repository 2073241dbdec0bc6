"""The session index of one agent: session key -> current session id, totals and settings.

It is derived data: written atomically (unique temp file + rename, mode 0600) after each
turn, and rebuilt from the transcripts' headers when it is missing or unreadable. Several
processes may share it: a read-modify-write holds :meth:`SessionIndex.locked`.

A turn touches one entry, so the file is handled as raw JSON objects and only that entry
is converted to and from :class:`SessionInfo` (converting all of them each turn made a
turn 1 ms slower with 200 sessions in the index).
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import Iterator
from pathlib import Path

import attrs
import cattrs

from clawbot.statefile import atomic_write_json, locked, make_private_dir
from clawbot.types import Usage

log = logging.getLogger(__name__)


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


class SessionIndex:
    def __init__(self, directory: Path, converter: cattrs.Converter) -> None:
        self.directory = directory
        self.path = directory / "sessions.json"
        self._conv = converter

    def read(self) -> dict[str, SessionInfo]:
        """Every entry (for listings); a turn uses :meth:`entry` and :meth:`put`."""
        raw = self.read_raw()
        try:
            return {key: self._conv.structure(value, SessionInfo) for key, value in raw.items()}
        except Exception as exc:
            log.warning("%s is unreadable (%s); rebuilding it from the transcripts", self.path, exc)
            return self.rebuild()

    def read_raw(self) -> dict[str, dict]:
        """The entries as JSON objects, rebuilt from the transcripts when missing or unreadable."""
        # Read every time: a cache keyed on (inode, mtime, size) was tried and dropped, since
        # a rename can reuse the inode number and coarse timestamps hide a same-size rewrite,
        # so it could serve another process's older state under the lock and lose its update.
        try:
            raw = json.loads(self.path.read_text(encoding="utf-8"))
            if not isinstance(raw, dict) or not all(isinstance(v, dict) for v in raw.values()):
                raise ValueError("not an object of session entries")
            return raw
        except FileNotFoundError:
            rebuilt = self.rebuild() if any(self.directory.glob("*.jsonl")) else {}
        except Exception as exc:
            log.warning("%s is unreadable (%s); rebuilding it from the transcripts", self.path, exc)
            rebuilt = self.rebuild()
        return {key: self._conv.unstructure(info) for key, info in rebuilt.items()}

    def entry(self, key: str, raw: dict[str, dict] | None = None) -> SessionInfo | None:
        """One entry, converted alone; a malformed one is rebuilt from its transcript."""
        value = (self.read_raw() if raw is None else raw).get(key)
        if value is None:
            return None
        try:
            return self._conv.structure(value, SessionInfo)
        except Exception as exc:
            log.warning("%s: the entry for %s is malformed (%s); rebuilding it from its transcript", self.path, key, exc)
            return self.rebuild().get(key)

    def write_raw(self, raw: dict[str, dict]) -> None:
        make_private_dir(self.directory)
        atomic_write_json(self.path, dict(sorted(raw.items())))

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

    def rebuild(self) -> dict[str, SessionInfo]:
        """The newest transcript of each key becomes its current session.

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
        for _, path in sorted(dated, key=lambda pair: pair[0]):
            try:
                with path.open(encoding="utf-8") as handle:
                    header = json.loads(handle.readline())
            except FileNotFoundError:
                continue
            except Exception as exc:
                log.warning("%s: skipped while rebuilding the session index: unreadable header (%s)", path, exc)
                continue
            if not isinstance(header, dict) or header.get("type") != "session":
                log.warning("%s: skipped while rebuilding the session index: no session header", path)
                continue
            key, session_id = header.get("key"), header.get("id")
            if not isinstance(key, str) or not key or not isinstance(session_id, str) or not session_id:
                log.warning("%s: skipped while rebuilding the session index: the header lacks a key or id", path)
                continue
            stamp = header.get("timestamp")
            stamp = stamp if isinstance(stamp, str) else ""
            found[key] = SessionInfo(key, session_id, stamp, stamp)
        return found
