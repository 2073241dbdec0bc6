"""Sessions on disk: ``<state>/sessions/<agent>/<session id>.jsonl`` plus ``sessions.json``.

Turns of one session are serialised by its lane: an asyncio lock per session key (kept only
while someone holds or waits for it) for the turns of this process, then the session's file
lock (:mod:`clawbot.sessions.turnlock`) for those of other processes (``clawbot run`` next to
``clawbot agent``), held for the whole turn; a turn opens the session inside its lane, so it
reads the index entry and the transcript as the previous turn left them. Different sessions
proceed concurrently. Every read-modify-write of ``sessions.json`` holds its own file lock;
a turn's changes go through the agent's :class:`~clawbot.sessions.batch.IndexWriter`, which
merges those of concurrent turns into one write.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import attrs

from clawbot.sessions.batch import IndexWriter
from clawbot.sessions.codec import make_data_converter
from clawbot.sessions.index import SessionIndex, SessionInfo
from clawbot.sessions.transcript import LoadedTranscript, Transcript, load_transcript, now_iso
from clawbot.sessions.turnlock import turn_lock, turn_lock_path
from clawbot.statefile import report_once
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
    #: clawbot's notices on opening it for a turn (an automatic reset), already sent to the chat
    notices: tuple[str, ...] = ()


@attrs.frozen
class _Totals:
    """What one turn adds to its session's entry."""

    usage: Usage
    model: str | None
    cost_usd: float | None
    auth_profile: str | None
    thinking: str | None
    system_event: bool
    kind: str = "chat"


class _Lane:
    __slots__ = ("lock", "users")

    def __init__(self) -> None:
        self.lock = asyncio.Lock()
        self.users = 0  # holding or waiting


class SessionStore:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.converter = make_data_converter()
        self._lanes: dict[str, _Lane] = {}
        #: one per agent, so its parsed index is kept between reads (SessionIndex caches it)
        self._writers: dict[str, IndexWriter] = {}

    @contextlib.asynccontextmanager
    async def lane(self, key: str) -> AsyncIterator[None]:
        """``async with store.lane(key):`` around a turn of ``key``: one writer per session.

        In-process waiters queue on the asyncio lock, so only the turn at its head waits for
        the file lock. The lane is forgotten when nobody holds or waits for it, so a
        long-running gateway does not keep a lock for every chat it ever saw.
        """
        lane = self._lanes.get(key)
        if lane is None:
            lane = self._lanes[key] = _Lane()
        lane.users += 1
        try:
            async with lane.lock, turn_lock(turn_lock_path(self.root / agent_of(key), key), key):
                yield
        finally:
            lane.users -= 1
            if lane.users == 0 and self._lanes.get(key) is lane:
                del self._lanes[key]

    def _index(self, agent_id: str) -> SessionIndex:
        return self.writer(agent_id).index

    def writer(self, agent_id: str) -> IndexWriter:
        """The writer of ``agent_id``'s index (its count of writes shows how turns were merged)."""
        writer = self._writers.get(agent_id)
        if writer is None:
            writer = self._writers[agent_id] = IndexWriter(SessionIndex(self.root / agent_id, self.converter))
        return writer

    def path_of(self, info: SessionInfo, agent_id: str) -> Path:
        return self.root / agent_id / f"{info.session_id}.jsonl"

    def get(self, key: str) -> SessionInfo | None:
        return self._index(agent_of(key)).entry(key)

    def list(self, agent_id: str | None = None) -> list[SessionInfo]:
        agents = [agent_id] if agent_id else sorted(p.name for p in self.root.iterdir() if p.is_dir()) if self.root.exists() else []
        found = [info for a in agents for info in self._index(a).read().values()]
        return sorted(found, key=lambda i: i.updated_at, reverse=True)

    def open(self, key: str, *, new: bool = False) -> Session:
        """The current session of ``key``; a new one when there is none or ``new`` is set."""
        agent_id = agent_of(key)
        index = self._index(agent_id)
        if not new:
            existing = self._existing(index.entry(key), agent_id)
            if existing is not None:
                return existing
        with index.locked():  # read again under the lock: another process may have created it
            raw = index.read_raw()
            if not new:
                existing = self._existing(index.entry(key, raw), agent_id)
                if existing is not None:
                    return existing
            stamp = now_iso()
            info = SessionInfo(key, uuid.uuid4().hex, stamp, stamp, last_user_at=stamp)
            transcript = Transcript.create(
                self.path_of(info, agent_id),
                self.converter,
                session_id=info.session_id,
                key=key,
                agent_id=agent_id,
                timestamp=stamp,
            )
            try:
                index.put(raw, info)
            except OSError as exc:  # the transcript names its key: a rebuilt index finds it
                index.write_failed(exc)
        return Session(info, transcript, created=True)

    def set_model_override(self, key: str, ref: str | None) -> SessionInfo | None:
        """Use ``ref`` for the session of ``key`` from its next turn (``None``: the configured
        model again); ``None`` when there is no session to set it on."""
        index = self._index(agent_of(key))
        with index.locked():
            raw = index.read_raw()
            info = index.entry(key, raw)
            if info is not None:
                info.model_override = ref
                index.put(raw, info)
        return info

    def set_setting(self, key: str, name: str, value: str | None) -> SessionInfo | None:
        """Set the chat setting ``name`` of the session of ``key`` (``None``: its default
        again); ``None`` when there is no session to set it on."""
        index = self._index(agent_of(key))
        with index.locked():
            raw = index.read_raw()
            info = index.entry(key, raw)
            if info is not None:
                settings = {k: v for k, v in info.settings.items() if k != name}
                info.settings = settings if value is None else {**settings, name: value}
                index.put(raw, info)
        return info

    def _existing(self, info: SessionInfo | None, agent_id: str) -> Session | None:
        if info is None:
            return None
        path = self.path_of(info, agent_id)
        try:
            loaded = load_transcript(path, self.converter)
        except FileNotFoundError:
            return None
        last = loaded.entries[-1].id if loaded.entries else None
        return Session(info, Transcript(path, self.converter, last), loaded=loaded)

    def record_turn(
        self,
        key: str,
        *,
        usage: Usage,
        model: str | None,
        cost_usd: float | None = None,
        auth_profile: str | None = None,
        session_id: str | None = None,
        thinking: str | None = None,
        transcript: Transcript | None = None,
        system_event: bool = False,
    ) -> SessionInfo:
        """Add one turn to the totals of ``key`` (and, given ``transcript``, write it there).

        A ``system_event`` turn (clawbot reporting on its own background work) leaves
        ``last_user_at`` alone: a job reporting back every few minutes must not keep a
        session the user left from its idle or daily reset.

        The transcript's ``turn`` entry is what a rebuilt index counts, so totals survive the
        loss of ``sessions.json``. Never fails because the entry is gone (another process reset
        it, or the index was rebuilt without it): the entry is recreated, for ``session_id``
        when given, else for the newest transcript of ``key``. Never fails because the index
        cannot be written either (disk full): the reply is stored, and a turn must not be lost
        over derived data (see :meth:`SessionIndex.write_failed`).
        """
        agent_id = agent_of(key)
        index = self._index(agent_id)
        info: SessionInfo | None = None
        try:
            with index.locked():
                raw = index.read_raw()
                info = self._counted(index, raw, key, session_id, _Totals(usage, model, cost_usd, auth_profile, thinking, system_event))
                index.write_raw(raw)
        except OSError as exc:
            index.write_failed(exc)
            if info is None:
                info = _unwritten(key, session_id, model, thinking, usage, cost_usd, auth_profile)
        if transcript is not None:  # after the index: a rebuild above must not count this turn twice
            self._append_turn(transcript, usage, model, cost_usd, auth_profile, thinking, system_event)
        return info

    async def record_turn_merged(
        self,
        key: str,
        *,
        usage: Usage,
        model: str | None,
        cost_usd: float | None = None,
        auth_profile: str | None = None,
        session_id: str | None = None,
        thinking: str | None = None,
        transcript: Transcript | None = None,
        system_event: bool = False,
        kind: str = "chat",
    ) -> SessionInfo:
        """:meth:`record_turn` for a turn in the event loop: its index change is written
        together with those of the turns that end in the same tick (one write for all).
        A ``kind = "heartbeat"`` turn is also counted apart (``SessionInfo.heartbeats``)."""
        agent_id = agent_of(key)
        writer = self.writer(agent_id)
        totals = _Totals(usage, model, cost_usd, auth_profile, thinking, system_event, kind)
        try:
            info = await writer.update(lambda raw: self._counted(writer.index, raw, key, session_id, totals))
        except OSError as exc:
            writer.index.write_failed(exc)
            info = _unwritten(key, session_id, model, thinking, usage, cost_usd, auth_profile)
        if transcript is not None:  # after the index: a rebuild meanwhile must not count this turn twice
            self._append_turn(transcript, usage, model, cost_usd, auth_profile, thinking, system_event, kind)
        return info

    async def open_merged(self, key: str) -> Session:
        """:meth:`open` for a turn in the event loop: a new session's entry is written together
        with the other index changes of the same tick."""
        agent_id = agent_of(key)
        writer = self.writer(agent_id)
        index = writer.index
        existing = self._existing(index.entry(key), agent_id)
        if existing is not None:
            return existing

        def create(raw: dict[str, dict]) -> tuple[SessionInfo, Transcript | None]:
            found = index.entry(key, raw)  # another process, or turn, may have created it
            if found is not None and self.path_of(found, agent_id).exists():
                return found, None
            stamp = now_iso()
            info = SessionInfo(key, uuid.uuid4().hex, stamp, stamp, last_user_at=stamp)
            path = self.path_of(info, agent_id)
            transcript = Transcript.create(path, self.converter, session_id=info.session_id, key=key, agent_id=agent_id, timestamp=stamp)
            raw[key] = self.converter.unstructure(info)
            return info, transcript

        info, transcript = await writer.update(create)
        if transcript is None:
            existing = self._existing(info, agent_id)
            return existing if existing is not None else self.open(key)
        return Session(info, transcript, created=True)

    def _counted(self, index: SessionIndex, raw: dict[str, dict], key: str, session_id: str | None, totals: _Totals) -> SessionInfo:
        """The entry of ``key`` in ``raw`` with one more turn counted (set in ``raw``)."""
        info = index.entry(key, raw)
        if info is None:
            info = self._recreate(index, key, session_id)
        info.turns += 1
        info.usage = info.usage + totals.usage
        info.updated_at = now_iso()
        if not totals.system_event:
            info.last_user_at = info.updated_at
        info.model = totals.model or info.model
        info.auth_profile = totals.auth_profile or info.auth_profile
        info.thinking = totals.thinking or info.thinking
        if totals.cost_usd is not None:
            info.cost_usd = (info.cost_usd or 0.0) + totals.cost_usd
        if totals.kind == "heartbeat":
            info.heartbeats += 1
            info.heartbeat_usage = info.heartbeat_usage + totals.usage
        raw[key] = self.converter.unstructure(info)
        return info

    def _append_turn(
        self,
        transcript: Transcript,
        usage: Usage,
        model: str | None,
        cost_usd: float | None,
        auth_profile: str | None,
        thinking: str | None,
        system_event: bool = False,
        kind: str = "chat",
    ) -> None:
        fields = {"usage": self.converter.unstructure(usage), "cost_usd": cost_usd, "model": model, "auth_profile": auth_profile, "thinking": thinking}
        if system_event:  # a rebuilt index does not count it as the user's activity
            fields["system_event"] = True
        if kind != "chat":  # a rebuilt index counts heartbeats apart
            fields["kind"] = kind
        try:
            transcript.append("turn", **{name: value for name, value in fields.items() if value is not None})
        except OSError as exc:  # the reply is stored; only a rebuilt index would miss this turn
            report_once(transcript.path, f"cannot record the totals of a turn ({exc.strerror or exc})")

    def _recreate(self, index: SessionIndex, key: str, session_id: str | None) -> SessionInfo:
        found = None if session_id else index.rebuild(key).get(key)
        if found is not None:
            return found
        stamp = now_iso()
        return SessionInfo(key, session_id or uuid.uuid4().hex, stamp, stamp, last_user_at=stamp)


def _unwritten(
    key: str, session_id: str | None, model: str | None, thinking: str | None, usage: Usage, cost_usd: float | None, auth_profile: str | None
) -> SessionInfo:
    """What a turn reports when the index could not be written (disk full): its own totals."""
    stamp = now_iso()
    return SessionInfo(key, session_id or "", stamp, stamp, model, thinking, 1, usage, cost_usd, auth_profile, last_user_at=stamp)
