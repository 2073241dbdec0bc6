"""Sessions on disk: ``<state>/sessions/<agent>/<session id>.jsonl`` plus ``sessions.json``.

Writes to one session are serialised by its lane (an asyncio lock per session key);
different sessions proceed concurrently.
"""

from __future__ import annotations

import asyncio
import uuid
from collections import defaultdict
from pathlib import Path

import attrs

from clawbot.sessions.codec import make_data_converter
from clawbot.sessions.index import SessionIndex, SessionInfo
from clawbot.sessions.transcript import LoadedTranscript, Transcript, load_transcript, now_iso
from clawbot.types import Usage


def agent_of(key: str) -> str:
    parts = key.split(":")
    return parts[1] if len(parts) > 2 and parts[0] == "agent" else "main"


@attrs.define
class Session:
    info: SessionInfo
    transcript: Transcript
    created: bool = False
    loaded: LoadedTranscript | None = None  # what open() read, so a turn need not read it again


class SessionStore:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.converter = make_data_converter()
        self._lanes: dict[str, asyncio.Lock] = defaultdict(asyncio.Lock)

    def lane(self, key: str) -> asyncio.Lock:
        """Hold this while running a turn of ``key``: one writer per session."""
        return self._lanes[key]

    def _index(self, agent_id: str) -> SessionIndex:
        return SessionIndex(self.root / agent_id, self.converter)

    def path_of(self, info: SessionInfo, agent_id: str) -> Path:
        return self.root / agent_id / f"{info.session_id}.jsonl"

    def get(self, key: str) -> SessionInfo | None:
        return self._index(agent_of(key)).read().get(key)

    def list(self, agent_id: str | None = None) -> list[SessionInfo]:
        agents = [agent_id] if agent_id else sorted(p.name for p in self.root.iterdir() if p.is_dir()) if self.root.exists() else []
        found = [info for a in agents for info in self._index(a).read().values()]
        return sorted(found, key=lambda i: i.updated_at, reverse=True)

    def open(self, key: str, *, new: bool = False) -> Session:
        """The current session of ``key``; a new one when there is none or ``new`` is set."""
        agent_id = agent_of(key)
        index = self._index(agent_id)
        sessions = index.read()
        info = sessions.get(key)
        if info is not None and not new and self.path_of(info, agent_id).exists():
            loaded = load_transcript(self.path_of(info, agent_id), self.converter)
            last = loaded.entries[-1].id if loaded.entries else None
            return Session(info, Transcript(self.path_of(info, agent_id), self.converter, last), loaded=loaded)
        stamp = now_iso()
        info = SessionInfo(key, uuid.uuid4().hex, stamp, stamp)
        transcript = Transcript.create(self.path_of(info, agent_id), self.converter, session_id=info.session_id, key=key, agent_id=agent_id)
        sessions[key] = info
        index.write(sessions)
        return Session(info, transcript, created=True)

    def record_turn(
        self, key: str, *, usage: Usage, model: str | None, cost_usd: float | None = None, auth_profile: str | None = None
    ) -> SessionInfo:
        index = self._index(agent_of(key))
        sessions = index.read()
        info = sessions[key]
        info.turns += 1
        info.usage = info.usage + usage
        info.updated_at = now_iso()
        info.model = model or info.model
        info.auth_profile = auth_profile or info.auth_profile
        if cost_usd is not None:
            info.cost_usd = (info.cost_usd or 0.0) + cost_usd
        index.write(sessions)
        return info
