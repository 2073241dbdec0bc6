"""Session keys: which conversation a message belongs to.

``dm_scope`` decides how direct messages are split: ``main`` (the owner's DMs, on every
channel, share the agent's main session, the default), ``per-peer`` (one session per person),
``per-channel-peer`` (per person and channel) or ``per-account-channel-peer`` (also per bot
account). Groups always get a session per group (and per thread).

The main session is the owner's: it holds their exec output and loads MEMORY.md. So under
``main`` anyone else writing in a DM (a stranger approved by pairing, an ``allow_from``
member, anyone under ``dm_policy = "open"``) gets a session of their own, keyed like
``per-channel-peer`` (``agent:<id>:<channel>:dm:<peer>``), unless ``session.non_owners_share_main``
says they share the main session too (a setup where everyone who writes is trusted alike).
"""

from __future__ import annotations

from typing import Literal

from clawbot.types import InboundMessage
from clawbot.types.session_keys import main_key, session_kind

__all__ = ["DmScope", "main_key", "resolve_session_key", "session_key_for", "session_kind"]

DmScope = Literal["main", "per-peer", "per-channel-peer", "per-account-channel-peer"]


def resolve_session_key(name: str | None, agent_id: str) -> str:
    """A session as the CLI takes it: a full key (``agent:<id>:...``), a name of the agent's
    own (``work`` is ``agent:<agent>:work``, ``main`` its main session), or ``None`` for the
    main session."""
    if not name:
        return main_key(agent_id)
    return name if name.startswith("agent:") else f"agent:{agent_id}:{name}"


def session_key_for(agent_id: str, message: InboundMessage, dm_scope: DmScope, *, owner: bool, non_owners_share_main: bool = False) -> str:
    """``owner``: the message is the owner's (:func:`clawbot.agent.owners.is_owner`); only
    the owner's DMs reach the main session under ``main``, unless ``non_owners_share_main``."""
    if message.chat_type == "direct":
        peer = message.peer_id
        if dm_scope == "per-peer":
            return f"agent:{agent_id}:dm:{peer}"
        if dm_scope == "per-account-channel-peer":
            return f"agent:{agent_id}:{message.channel}:{message.account_id}:dm:{peer}"
        if dm_scope == "per-channel-peer" or not (owner or non_owners_share_main):
            return f"agent:{agent_id}:{message.channel}:dm:{peer}"
        return main_key(agent_id)
    key = f"agent:{agent_id}:{message.channel}:group:{message.peer_id}"
    return f"{key}:thread:{message.thread_id}" if message.thread_id else key
