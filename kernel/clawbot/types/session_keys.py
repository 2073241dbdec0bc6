"""What a session key says: ``agent:<id>:main`` is the agent's main session (the owner's),
and the rest of a key names what else a session is (a group, a cron job's, a sub-agent's)."""

from __future__ import annotations

from clawbot.types.prompt import SessionKind


def main_key(agent_id: str) -> str:
    return f"agent:{agent_id}:main"


def session_kind(session_key: str) -> SessionKind:
    """``agent:<id>:main`` is the main session; the rest of the key says what else it is."""
    parts = session_key.split(":")[2:] if session_key.startswith("agent:") else session_key.split(":")
    if parts == ["main"]:
        return "main"
    if "subagent" in parts:
        return "subagent"
    if "cron" in parts:
        return "cron"
    if "group" in parts:
        return "group"
    return "direct"
