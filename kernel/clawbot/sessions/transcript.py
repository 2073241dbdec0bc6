"""One session's append-only JSONL transcript.

Line 1 is a ``session`` header; every later line is an entry with ``id``, ``parent_id``,
``timestamp`` and ``type`` (``message``, ``compaction`` or ``custom``). Entries are written
and flushed as they happen, so a killed process loses at most the line it was writing. On
load, a torn or corrupt line is skipped with a warning (never fatal), and tool calls left
without results by a crash are answered with an error result, so the next request is valid
for every provider.
"""

from __future__ import annotations

import json
import logging
import os
import uuid
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import attrs
import cattrs

from clawbot.sessions.scan import MAX_HEADER, last_compaction_offset
from clawbot.sessions.summary import render_summary
from clawbot.statefile import json_text, make_private_dir, report_once
from clawbot.types import Message, Role, TextBlock

log = logging.getLogger(__name__)
FORMAT_VERSION = 1
INTERRUPTED = "The tool call was interrupted before it finished (the process stopped). Run it again if it is still needed."


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


@attrs.frozen
class Entry:
    id: str
    type: str
    timestamp: str
    parent_id: str | None = None
    message: Message | None = None
    data: dict[str, Any] = attrs.field(factory=dict)
    #: a compaction's kept messages, carried on its own line: a line is written whole or
    #: skipped as torn, so a process killed while compacting never leaves half of them
    kept: tuple[Message, ...] = ()


@attrs.define
class LoadedTranscript:
    header: dict[str, Any]
    entries: list[Entry]
    warnings: list[str]

    def messages(self) -> list[Message]:
        """The conversation since the last compaction, repaired for dangling tool calls."""
        start = 0
        compaction: Entry | None = None
        for index, entry in enumerate(self.entries):
            if entry.type == "compaction":
                start, compaction = index + 1, entry
        messages = [e.message for e in self.entries[start:] if e.type == "message" and e.message is not None]
        if compaction is not None:
            messages[:0] = compaction.kept
            if compaction.data.get("summary"):
                messages.insert(0, Message.user(render_summary(compaction.data["summary"], compaction.id)))
        return repair_tool_calls(messages)


def repair_tool_calls(messages: Iterable[Message]) -> list[Message]:
    """Give every tool call a result: an error result right after its assistant message."""
    out: list[Message] = []
    pending: dict[str, str] = {}

    def flush() -> None:
        for call_id, name in pending.items():
            out.append(Message(Role.TOOL_RESULT, (TextBlock(INTERRUPTED),), tool_call_id=call_id, tool_name=name, is_error=True))
        pending.clear()

    for message in messages:
        if message.role == Role.TOOL_RESULT:
            if message.tool_call_id in pending:
                pending.pop(message.tool_call_id)
                out.append(message)
            else:
                log.warning("dropping a tool result without its call (%s)", message.tool_call_id)
            continue
        flush()
        out.append(message)
        if message.role == Role.ASSISTANT:
            pending = {call.id: call.name for call in message.tool_calls}
    flush()
    return out


class Transcript:
    """Appends entries to one JSONL file; create with :meth:`create` or :meth:`open`."""

    def __init__(self, path: Path, converter: cattrs.Converter, last_id: str | None = None) -> None:
        self.path = path
        self._conv = converter
        self.last_id = last_id
        self._clean_end = False

    @classmethod
    def create(cls, path: Path, converter: cattrs.Converter, *, session_id: str, key: str, agent_id: str, timestamp: str | None = None) -> Transcript:
        """``timestamp``: the session's creation time in the index (a rebuilt index reads it here)."""
        make_private_dir(path.parent)  # 0700: transcripts and the index name peers
        header = {"type": "session", "version": FORMAT_VERSION, "id": session_id, "key": key, "agent": agent_id, "timestamp": timestamp or now_iso()}
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(json.dumps(header) + "\n")
        return cls(path, converter)

    def append(self, entry_type: str, *, message: Message | None = None, kept: tuple[Message, ...] = (), **data: Any) -> Entry:
        """Append one entry as one line; ``kept`` (a compaction's) travels on that line."""
        entry = Entry(uuid.uuid4().hex[:12], entry_type, now_iso(), self.last_id, message, data, tuple(kept))
        record: dict[str, Any] = {"type": entry.type, "id": entry.id, "parent_id": entry.parent_id, "timestamp": entry.timestamp}
        if message is not None:
            record["message"] = self._conv.unstructure(message)
        record.update(data)
        if kept:
            record["kept"] = [self._conv.unstructure(m) for m in kept]
        line = json_text(record) + "\n"  # any str can be written: a failed append would lose the turn
        with self.path.open("a", encoding="utf-8") as handle:
            # A torn previous line (crash mid-write) must not swallow this entry. Once this
            # object has written a whole line itself, the file is known to end cleanly.
            if not self._clean_end and handle.tell() > 0 and not self._ends_with_newline():
                handle.write("\n")
            handle.write(line)
            handle.flush()
        self._clean_end = True
        self.last_id = entry.id
        return entry

    def append_message(self, message: Message) -> Entry:
        return self.append("message", message=message)

    def _ends_with_newline(self) -> bool:
        with self.path.open("rb") as handle:
            handle.seek(-1, os.SEEK_END)
            return handle.read(1) == b"\n"

    def load(self, *, whole: bool = False) -> LoadedTranscript:
        return load_transcript(self.path, self._conv, whole=whole)


def _check_entry(record: dict[str, Any]) -> None:
    """Raise ``TypeError`` for a line whose fields have the wrong types (it is skipped)."""
    for name in ("id", "type"):
        if not isinstance(record.get(name), str):
            raise TypeError(f"{name} is not text")
    if not isinstance(record.get("timestamp", ""), str) or not isinstance(record.get("parent_id"), (str, type(None))):
        raise TypeError("timestamp or parent_id is not text")
    kept = record.get("kept") if record.get("type") == "compaction" else None
    if kept is not None and not isinstance(kept, list):
        raise TypeError("the kept messages are not a list")
    for message in [record.get("message"), *(kept or ())]:
        if isinstance(message, dict) and not isinstance(message.get("content", []), list):
            raise TypeError("the message content is not a list")  # a converter would take an object's keys


def load_transcript(path: Path, converter: cattrs.Converter, *, whole: bool = False) -> LoadedTranscript:
    """The header and the entries from the last compaction on (all of them when ``whole``).

    A turn needs only what follows the last compaction, and a long-lived session's transcript
    can reach hundreds of megabytes before it: that part is not read (see
    :mod:`~clawbot.sessions.scan`). Lines are read one at a time, never the whole file.
    """
    header: dict[str, Any] = {}
    entries: list[Entry] = []
    warnings: list[str] = []
    with path.open("rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        start = None if whole else last_compaction_offset(handle, size)
        handle.seek(0)
        if start is not None:
            header = _header(handle.readline(MAX_HEADER))
            handle.seek(start)
        offset = start or 0
        for number, line in enumerate(handle, start=1):
            place = f"line {number}" if start is None else f"byte {offset}"
            line_start, offset = offset, offset + len(line)
            if not line.strip():
                continue
            try:
                record = json.loads(line)
                if line_start == 0 and isinstance(record, dict) and record.get("type") == "session":
                    header = record
                    continue
                entries.append(_entry(record, converter))
            except Exception as exc:
                torn = offset == size and not line.endswith(b"\n")
                kind = "torn last line (the process stopped while writing)" if torn else f"corrupt line ({type(exc).__name__})"
                warnings.append(f"{path.name}:{number if start is None else ' ' + place}: skipped {kind}")
                report_once(path, f"{place}: skipped {kind}")
    return LoadedTranscript(header, entries, warnings)


def _header(line: bytes) -> dict[str, Any]:
    try:
        record = json.loads(line)
    except ValueError:
        return {}
    return record if isinstance(record, dict) and record.get("type") == "session" else {}


def _entry(record: Any, converter: cattrs.Converter) -> Entry:
    if not isinstance(record, dict):
        raise TypeError("not an object")
    _check_entry(record)
    message = record.pop("message", None)
    kept = record.pop("kept", None) if record.get("type") == "compaction" else None
    return Entry(
        id=record.pop("id"),
        type=record.pop("type"),
        timestamp=record.pop("timestamp", ""),
        parent_id=record.pop("parent_id", None),
        message=converter.structure(message, Message) if message is not None else None,
        data=record,
        kept=tuple(converter.structure(m, Message) for m in kept) if isinstance(kept, list) else (),
    )
