"""User messages as stored and as sent: the text and its facts apart, rendered by position.

A transcript keeps what a user message said as it arrived (its text) and what clawbot knew
about it (``Message.meta``: :func:`clawbot.agent.inbound.inbound_meta`). Each request renders
them anew: the newest user message in full, with its trusted block and untrusted context;
every older one as its body alone (the sender's name in a group, the text in the owner's
direct chat, clawbot's label on an event or another session's message). The body depends on
nothing but the stored message, so an earlier message is sent byte for byte the same on
every later turn and the provider's prompt cache keeps it.

Transcripts from before ``meta`` hold the rendered envelope as the text; they are read back
with :func:`clawbot.agent.inbound.parse_envelope` and sent the same way.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Literal

import attrs

from clawbot.agent.inbound import (
    CAUSED_BY_OWNER,
    describe_sender,
    inbound_meta,
    parse_envelope,
    render_current,
    render_history,
    session_meta,
    unwrapped,
)
from clawbot.agent.owners import is_owner
from clawbot.sessions.summary import SUMMARY_LABEL
from clawbot.types import InboundMessage, Message, Role, TextBlock, TurnTrust


def user_message(text: str | Message, origin: InboundMessage | None, *, zone: Any = None, owner_ids: Iterable[str] = ()) -> Message:
    """The user message a turn stores: a CLI turn's text alone, a chat's text with its facts.
    A message built already (another session's: :func:`session_message`) is kept as it is."""
    if isinstance(text, Message):
        return text
    if origin is None:
        return Message.user(text)

    meta = inbound_meta(origin, zone=zone, owner=is_owner(origin, owner_ids))
    return Message(Role.USER, (TextBlock(text),), meta=meta)


def session_message(text: str, *, from_session: str, from_agent: str) -> Message:
    """What another session sent with ``sessions_send``, labelled by clawbot with its sender."""
    return Message(Role.USER, (TextBlock(text),), meta=session_meta(from_session=from_session, from_agent=from_agent))


def _parts(message: Message) -> tuple[str, dict[str, Any] | None]:
    """The text and facts of a user message; an old envelope is taken apart."""
    if message.meta is not None:
        return message.text, message.meta
    parsed = parse_envelope(message.text)
    return (message.text, None) if parsed is None else (parsed[1], parsed[0])


def _with_text(message: Message, text: str) -> Message:
    others = tuple(b for b in message.content if not isinstance(b, TextBlock))
    return attrs.evolve(message, content=(TextBlock(text), *others), meta=None)


def as_sent(messages: Sequence[Message]) -> list[Message]:
    """``messages`` as the model gets them: the newest user message in full, older ones as their body."""
    newest = max((i for i, m in enumerate(messages) if m.role == Role.USER), default=-1)
    out: list[Message] = []
    for index, message in enumerate(messages):
        if message.role != Role.USER:
            out.append(message)
        elif index == newest:
            # An old envelope that is somehow the newest was sent in full already: as it is.
            out.append(message if message.meta is None else _with_text(message, render_current(message.text, message.meta)))
        else:
            out.append(history_form(message))
    return out


def history_form(message: Message) -> Message:
    """A user message as it is sent once a newer one exists (and as another session reads it)."""
    if message.role != Role.USER:
        return message
    text, meta = _parts(message)
    return message if meta is None else _with_text(message, render_history(text, meta))


def full_form(message: Message) -> Message:
    """A user message as the model got it while it was the newest (``clawbot sessions show --raw``)."""
    if message.role != Role.USER or message.meta is None:
        return message
    return _with_text(message, render_current(message.text, message.meta))


def shown(message: Message) -> tuple[str | None, str]:
    """(who, text) of a user message for a person reading the transcript: the text as written."""
    if message.meta is not None:
        return describe_sender(message.meta), message.text
    return unwrapped(message.text)


@attrs.frozen
class Speaker:
    """Who wrote a user message, as clawbot stored it, and what it said.

    ``kind``: ``"owner"`` (the owner, in any chat; a turn typed at the CLI too), ``"other"``
    (anyone else: a group member, a stranger in a direct chat), ``"event"`` (clawbot's own
    report, e.g. a background command's end; ``owner_caused`` when a turn of the owner caused
    it) or ``"session"`` (another session's
    ``sessions_send``). ``name`` and ``sender_id`` come from the chat network (untrusted,
    ``None`` when not stored); ``session`` is the sending session's key. ``text`` is what the
    message said, as written: untrusted unless the owner wrote it."""

    kind: Literal["owner", "other", "event", "session"]
    text: str
    name: str | None = None
    sender_id: str | None = None
    chat_type: str | None = None
    session: str | None = None
    owner_caused: bool = False  # an event: a turn of the owner caused it (else someone else's, or nobody knows whose)

    @property
    def not_the_owner(self) -> bool:
        """Whether these words are someone else's: another person's message, or an event a
        turn of someone else caused (a stranger's background command reporting its output)."""
        return self.kind == "other" or (self.kind == "event" and not self.owner_caused)


def _stored(meta: dict[str, Any], key: str) -> str | None:
    value = meta.get(key)
    return None if value in (None, "") else str(value)


def speaker(message: Message) -> Speaker:
    """Who wrote user message ``message`` (see :class:`Speaker`); an old envelope is read back.

    A message without stored facts is a CLI turn, typed by the owner; an old envelope never
    said the owner wrote it, so it counts as someone else's."""
    text, meta = _parts(message)
    if meta is None:
        return Speaker("owner", text)
    if meta.get("system_event"):
        return Speaker("event", text, chat_type=_stored(meta, "chat_type"), owner_caused=bool(meta.get(CAUSED_BY_OWNER)))
    if "from_session" in meta:
        return Speaker("session", text, chat_type="session", session=_stored(meta, "from_session"))
    kind: Literal["owner", "other"] = "owner" if meta.get("from_owner") else "other"
    return Speaker(kind, text, _stored(meta, "sender"), _stored(meta, "sender_id"), _stored(meta, "chat_type"))


def is_summary(message: Message) -> bool:
    """Whether ``message`` stands for a part of the conversation a compaction replaced: who
    wrote in that part is known only from the compaction entry, never from the message."""
    return message.role == Role.USER and message.meta is None and message.text.startswith(f"{SUMMARY_LABEL}\n")


def event_trust(cause: TurnTrust, history: Sequence[Message]) -> TurnTrust:
    """The trust of a turn answering a clawbot event that a turn of ``cause``'s trust caused:
    the lowest of ``cause`` and every user message ``history`` stored from the turn of the
    owner's latest own message on (the earliest the causing turn can have been the owner's
    newest; the messages that waited and were answered in that same turn count too), an
    event of someone else's turn included. A group member who asked, beside or after the
    owner's message, for something to be done "when the tests finish" does not get it done
    with the owner's trust when they do."""
    if cause is not TurnTrust.OWNER:
        return cause
    start = next((i for i in range(len(history) - 1, -1, -1) if history[i].role == Role.USER and speaker(history[i]).kind == "owner"), 0)
    while start > 0 and history[start - 1].role == Role.USER:  # answered by the same turn
        start -= 1
    others = any(speaker(m).not_the_owner for m in history[start:] if m.role == Role.USER)
    return TurnTrust.NON_OWNER if others else TurnTrust.OWNER
