"""``clawbot doctor``: who other than the owner can write into an agent's main session.

The main session holds the owner's history (their exec output) and loads MEMORY.md. Only
the owner's direct messages reach it unless ``session.non_owners_share_main`` is set with
``dm_scope = "main"``; then every channel whose direct chats let someone else in (``dm_policy
= "open"``, ``allow_from``, senders approved by pairing) is named, with its keys.
"""

from __future__ import annotations

import logging
from typing import Any

from clawbot.doctor_findings import Finding
from clawbot.gateway.access import Access
from clawbot.gateway.pairing import PairingError
from clawbot.gateway.runner import enabled_channels

log = logging.getLogger(__name__)

SHARED_KEY = "session.non_owners_share_main"


def non_owner_doors(kernel: Any) -> list[str]:
    """Each way someone other than the owner gets into a direct chat, naming its channel and key."""
    access = Access(kernel)
    doors = []
    for channel in enabled_channels(kernel):
        name = channel.name
        table = access.table(channel)
        if table.dm_policy == "disabled":
            continue
        if table.dm_policy == "open":
            doors.append(f'{name}: anyone (channels.{name}.dm_policy = "open")')
        elif table.allow_from:
            doors.append(f"{name}: channels.{name}.allow_from = {', '.join(table.allow_from)}")
        try:
            approved = access.pairing(name).approved()
        except (OSError, PairingError) as exc:  # a doctor reports, and goes on
            log.warning("the pairing state of %s could not be read: %s", name, exc)
            approved = []
        if approved:
            senders = ", ".join(f"{a.sender_id} ({a.sender_name})" if a.sender_name else a.sender_id for a in approved)
            doors.append(f"{name}: approved by pairing: {senders}")
    return doors


def check_main_session(kernel: Any) -> list[Finding]:
    session = kernel.config.session
    doors = non_owner_doors(kernel)
    if not doors:
        return []
    if session.dm_scope == "main" and session.non_owners_share_main:
        return [
            Finding(
                "warn",
                "sessions",
                f"non-owners can write into the owner's main session (its history, exec output and MEMORY.md; {SHARED_KEY} = true): {'; '.join(doors)}",
                f"set {SHARED_KEY} = false to give each a session of their own,"
                " or let fewer in (the allow_from lists, `clawbot pairing revoke <channel> <sender>`)",
            )
        ]
    return [Finding("ok", "sessions", f"the main session is the owner's alone; everyone else gets a session of their own ({'; '.join(doors)})")]
