"""Whatever a sender writes, neither form of a user message holds metadata clawbot did not write.

Texts and sender names are built from pieces of the kernel's marker phrases run together
with blanks, look-alike letters and line breaks; for each kind of message (the owner's
direct message or group message, a stranger's, a group's, clawbot's event, another session's) the newest form
must have exactly clawbot's header and labels and its trusted JSON must say what clawbot
decided, and the form later turns re-send must have no header at all and only the label of
its kind (or the sender's name and clawbot's tag), and no line of the text may start at
the margin, where a new sender's line would.
"""

from __future__ import annotations

import json
import re

from clawbot import InboundMessage
from clawbot.agent.inbound import (
    CONTINUATION,
    SESSION_MESSAGE_LABEL,
    SYSTEM_EVENT_LABEL,
    TRUSTED_HEADER,
    TRUSTED_KEYS,
    render_current,
    render_history,
)
from clawbot.agent.user_turns import session_message, user_message
from clawbot.markers import TRUSTED_MARKERS, untrusted
from clawbot.safetext import fold
from hypothesis import given, settings
from hypothesis import strategies as st

MARKERS = sorted({*TRUSTED_MARKERS, TRUSTED_HEADER, SYSTEM_EVENT_LABEL, SESSION_MESSAGE_LABEL, "```json", "```", '"system_event": true'})
GLUE = ["", " ", "\n", "\n\n", "\r", "\x85", "\u200b", "\u2028", "\u3164", "\uff3b", "\u043e", "\u0301", "x", ": ", "Ann: ", "Ann (owner): ", "(id u1)", "]"]
PIECES = st.one_of(
    st.builds(lambda m, front, back: m[front % 3 : len(m) - back % 3], st.sampled_from(MARKERS), st.integers(0, 2), st.integers(0, 2)),
    st.sampled_from(MARKERS),
    st.sampled_from(GLUE),
    st.text(max_size=4),
)
HOSTILE = st.lists(PIECES, max_size=8).map("".join)
KINDS = ("owner", "owner in a group", "stranger", "group", "event", "session")

# What each kind's forms must hold, folded: (trusted headers, system event labels, session labels)
HEADER, EVENT, SESSION = fold("Inbound Context"), fold("System event from clawbot"), fold("Message from another clawbot session")


def _stored(kind: str, text: str, name: str):
    if kind == "session":
        return session_message(text, from_session=f"agent:main:{name}", from_agent="main")
    origin = InboundMessage(
        channel="telegram",
        peer_id="g1" if "group" in kind else "u1",
        text=text,
        chat_type="group" if "group" in kind else "direct",
        sender_id="u1",
        sender_name=name,
        message_id="m1",
        reply_to_id="m0",
        mentioned=True,
        system_event=kind == "event",
        from_owner=kind.startswith("owner"),
    )
    return user_message(text, origin)


@settings(max_examples=300, deadline=None)
@given(kind=st.sampled_from(KINDS), text=HOSTILE, name=HOSTILE)
def test_no_text_or_name_forges_metadata_in_either_form(kind: str, text: str, name: str) -> None:
    stored = _stored(kind, text, name)
    newest, older = render_current(stored.text, stored.meta), render_history(stored.text, stored.meta)
    is_event, is_session = int(kind == "event"), int(kind == "session")

    assert newest.startswith(TRUSTED_HEADER + "\n")
    folded = fold(newest)
    assert (folded.count(HEADER), folded.count(EVENT), folded.count(SESSION)) == (1, is_event, is_session)
    trusted = json.loads(re.match(r".*?```json\n([^\n]*)\n```", newest, re.DOTALL).group(1))
    assert set(trusted) <= set(TRUSTED_KEYS)
    assert trusted.get("system_event", False) is bool(is_event)
    assert trusted.get("from_owner", False) is kind.startswith("owner")
    assert ("from_session" in trusted) is bool(is_session)
    assert newest.endswith("\n\n" + older)  # the body is the same in both forms

    folded = fold(older)
    assert (folded.count(HEADER), folded.count(EVENT), folded.count(SESSION)) == (0, is_event, is_session)
    assert fold("[message_id:") not in folded and fold("trusted metadata") not in folded
    lines = older.splitlines(keepends=True)
    if kind == "owner":  # the owner's own direct message: the text alone
        assert older == untrusted(text)
        return
    # Who wrote it (a JSON string or plain token) and clawbot's tag, then the text; or a label.
    # Either way no line of the text starts at the margin, where only clawbot writes.
    if kind in ("event", "session"):
        head = 2 if kind == "session" else 1
        assert all(line.startswith(CONTINUATION) for line in lines[head:])
        return
    who, rest = _decode_inline(older)
    tag = " (owner): " if kind == "owner in a group" else " (id u1): "
    assert who == (untrusted(name) or "u1") and rest.startswith(tag)
    assert all(line.startswith(CONTINUATION) for line in rest[len(tag) :].splitlines(keepends=True)[1:])


def _decode_inline(body: str) -> tuple[str, str]:
    if body.startswith('"'):
        value, end = json.JSONDecoder().raw_decode(body)
        return value, body[end:]
    token = re.match(r"[\w.@+\-]{1,128}", body)
    assert token, body[:60]
    return token.group(0), body[token.end() :]
