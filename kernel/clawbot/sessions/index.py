"""The session index of one agent: session key -> current session id, totals and settings.

It is derived data: written atomically (temp file + rename) after each turn, and rebuilt
from the transcripts' headers when it is missing or unreadable.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

import attrs
import cattrs

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
        try:
            raw = json.loads(self.path.read_text(encoding="utf-8"))
            return {key: self._conv.structure(value, SessionInfo) for key, value in raw.items()}
        except FileNotFoundError:
            return self.rebuild() if any(self.directory.glob("*.jsonl")) else {}
        except Exception as exc:
            log.warning("%s is unreadable (%s); rebuilding it from the transcripts", self.path, exc)
            return self.rebuild()

    def write(self, sessions: dict[str, SessionInfo]) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".json.tmp")
        # Compact separators: ``indent`` would force the pure-Python encoder (4x slower).
        tmp.write_text(
            json.dumps({k: self._conv.unstructure(v) for k, v in sorted(sessions.items())}, separators=(",", ":")),
            encoding="utf-8",
        )
        os.replace(tmp, self.path)

    def rebuild(self) -> dict[str, SessionInfo]:
        """The newest transcript of each key becomes its current session."""
        found: dict[str, SessionInfo] = {}
        for path in sorted(self.directory.glob("*.jsonl"), key=lambda p: p.stat().st_mtime):
            try:
                with path.open(encoding="utf-8") as handle:
                    header = json.loads(handle.readline())
            except Exception:
                continue
            if header.get("type") == "session" and header.get("key"):
                stamp = header.get("timestamp", "")
                found[header["key"]] = SessionInfo(header["key"], header["id"], stamp, stamp)
        return found
