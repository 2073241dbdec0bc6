"""What a user may do to a session besides talking in it: start afresh, choose its model.

Shared by the chat commands (``/new``, ``/reset``, ``/model``), the CLI (``clawbot sessions
reset``) and the turn that finds its session stale (``session.reset``), so each fires the same
lifecycle hooks the same way.
"""

from __future__ import annotations

from datetime import datetime

from clawbot.agent.clock import user_timezone
from clawbot.agent.services import SharedServices
from clawbot.kernel import Kernel
from clawbot.sessions.index import SessionInfo
from clawbot.sessions.reset_policy import stale_reason
from clawbot.sessions.store import Session, SessionStore, agent_of
from clawbot.types import InboundMessage, SessionEvent


async def reset_session(kernel: Kernel, session_key: str, reason: str) -> tuple[SessionInfo | None, SessionInfo]:
    """Give ``session_key`` a new, empty session; the old transcript stays on disk.

    Waits for a turn running in the session (in this process or another) to end: the caller
    stops it first where it can. A model chosen with ``/model`` stays chosen: it belongs to
    the chat, and starting the conversation afresh is not asking for another model. Fires ``clawbot_session_end`` for the old session (when
    there was one), then ``clawbot_session_start`` for the new one, both with ``reason``.
    Returns (old, new).
    """
    async with kernel.sessions.lane(session_key):
        old, new = _renew(kernel.sessions, session_key)
    await _announce_renewal(kernel, session_key, old, new.info, reason)
    return old, new.info


def _renew(store: SessionStore, session_key: str) -> tuple[SessionInfo | None, Session]:
    """A new session for ``session_key`` (its lane held), keeping the ``/model`` choice."""
    old = store.get(session_key)
    new = store.open(session_key, new=True)
    if old is not None and old.model_override:
        new.info = store.set_model_override(session_key, old.model_override) or new.info
    for name, value in (old.settings if old is not None else {}).items():  # /think, /usage ... belong to the chat too
        new.info = store.set_setting(session_key, name, value) or new.info
    return old, new


async def _announce_renewal(kernel: Kernel, session_key: str, old: SessionInfo | None, new: SessionInfo, reason: str) -> None:
    agent_id = agent_of(session_key)
    if old is not None:
        await kernel.plugins.notify("clawbot_session_end", event=SessionEvent(agent_id, session_key, old.session_id, reason))
    await kernel.plugins.notify("clawbot_session_start", event=SessionEvent(agent_id, session_key, new.session_id, reason))


async def open_for_turn(
    kernel: Kernel,
    session_key: str,
    now: datetime,
    *,
    system_event: bool = False,
    services: SharedServices | None = None,
    origin: InboundMessage | None = None,
) -> Session:
    """The session a turn of ``session_key`` runs in (its lane held by the caller).

    A key without a session gets one (``clawbot_session_start``, reason ``"first message"``).
    A session the ``session.reset`` policy finds stale at ``now`` ends the way ``/new`` ends
    one (old transcript kept, hooks fired with the policy's reason) and the message starts a
    fresh one. A system event (clawbot reporting on work the session started) never ends it,
    and the policy counts from the last turn a person started (``last_user_at``), so events
    do not keep a session alive either. After a reset the user is told, as clawbot's notice
    in the chat ``origin`` came from (and in ``Session.notices``, which a CLI run prints):
    the model is not, since the fresh session must start without the old conversation.
    """
    store = kernel.sessions
    session = await store.open_merged(session_key)
    if session.created:
        event = SessionEvent(agent_of(session_key), session_key, session.info.session_id, reason="first message")
        await kernel.plugins.notify("clawbot_session_start", event=event)
        return session
    policy = kernel.config.session.reset
    if policy.mode == "off" or system_event:
        return session
    zone = user_timezone(kernel.config.agents.defaults.timezone)[0]
    reason = stale_reason(policy, _parse_time(session.info.last_person_activity) or now, now, zone)
    if reason is None:
        return session
    old, new = _renew(store, session_key)
    await _announce_renewal(kernel, session_key, old, new.info, reason)
    if old is not None:
        new.notices = (reset_notice(reason, store.path_of(old, agent_of(session_key)).name),)
        if services is not None:
            await services.tell_chat(origin, session_key, new.notices[0])
    return new


def reset_notice(reason: str, kept_in: str) -> str:
    """What the user reads when a message found its session over (``reason``, the policy's).
    The old transcript is named by its file name only: the notice may reach a group, which
    has no business reading the host's folders."""
    return (
        f"Started a new session ({reason}): I no longer have the earlier conversation. It is kept "
        f"(transcript {kept_in} in clawbot's sessions folder); what was saved to memory is still there."
    )


def _parse_time(stamp: str) -> datetime | None:
    try:
        return datetime.fromisoformat(stamp)
    except (TypeError, ValueError):
        return None  # an index entry edited by hand: never a reason to end the session


async def set_session_model(kernel: Kernel, session_key: str, ref: str | None, reason: str) -> SessionInfo:
    """Use the model ``ref`` for ``session_key`` from its next turn on (``None``: the
    configured one again), creating the session first when it has none yet."""
    store = kernel.sessions
    session = await store.open_merged(session_key)
    if session.created:
        event = SessionEvent(agent_of(session_key), session_key, session.info.session_id, reason)
        await kernel.plugins.notify("clawbot_session_start", event=event)
    info = store.set_model_override(session_key, ref)
    return info if info is not None else session.info


async def set_session_setting(kernel: Kernel, session_key: str, name: str, value: str | None, reason: str) -> SessionInfo:
    """Set the chat setting ``name`` (``/think``, ``/usage`` ...) of ``session_key`` from its
    next turn on (``None``: the default again), creating the session first when it has none."""
    store = kernel.sessions
    session = await store.open_merged(session_key)
    if session.created:
        event = SessionEvent(agent_of(session_key), session_key, session.info.session_id, reason)
        await kernel.plugins.notify("clawbot_session_start", event=event)
    info = store.set_setting(session_key, name, value)
    return info if info is not None else session.info
