"""Session keys, e.g. ``agent:main:main`` or ``agent:main:telegram:dm:123``."""

from __future__ import annotations

from clawbot.types import InboundMessage


def main_key(agent_id: str) -> str:
    return f"agent:{agent_id}:main"


def session_key_for(agent_id: str, message: InboundMessage) -> str:
    """Direct messages share the agent's main session (dm_scope "main", the default);
    groups get their own session per group."""
    if message.chat_type == "direct":
        return main_key(agent_id)
    key = f"agent:{agent_id}:{message.channel}:group:{message.peer_id}"
    return f"{key}:thread:{message.thread_id}" if message.thread_id else key
