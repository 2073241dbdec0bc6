"""What a user may do to a session besides talking in it: start afresh, choose its model.

Shared by the chat commands (``/new``, ``/reset``, ``/model``) and the CLI
(``clawbot sessions reset``), so each fires the same lifecycle hooks the same way.
"""

from __future__ import annotations

from clawbot.kernel import Kernel
from clawbot.sessions.index import SessionInfo
from clawbot.sessions.store import agent_of
from clawbot.types import SessionEvent


async def reset_session(kernel: Kernel, session_key: str, reason: str) -> tuple[SessionInfo | None, SessionInfo]:
    """Give ``session_key`` a new, empty session; the old transcript stays on disk.

    Waits for a turn running in the session (in this process or another) to end: the caller
    stops it first where it can. A model chosen with ``/model`` stays chosen: it belongs to
    the chat, and starting the conversation afresh is not asking for another model. Fires ``clawbot_session_end`` for the old session (when
    there was one), then ``clawbot_session_start`` for the new one, both with ``reason``.
    Returns (old, new).
    """
    store = kernel.sessions
    async with store.lane(session_key):
        old = store.get(session_key)
        new = store.open(session_key, new=True).info
        if old is not None and old.model_override:
            new = store.set_model_override(session_key, old.model_override) or new
    agent_id = agent_of(session_key)
    if old is not None:
        await kernel.plugins.notify("clawbot_session_end", event=SessionEvent(agent_id, session_key, old.session_id, reason))
    await kernel.plugins.notify("clawbot_session_start", event=SessionEvent(agent_id, session_key, new.session_id, reason))
    return old, new


async def set_session_model(kernel: Kernel, session_key: str, ref: str | None, reason: str) -> SessionInfo:
    """Use the model ``ref`` for ``session_key`` from its next turn on (``None``: the
    configured one again), creating the session first when it has none yet."""
    store = kernel.sessions
    session = store.open(session_key)
    if session.created:
        event = SessionEvent(agent_of(session_key), session_key, session.info.session_id, reason)
        await kernel.plugins.notify("clawbot_session_start", event=event)
    info = store.set_model_override(session_key, ref)
    return info if info is not None else session.info
