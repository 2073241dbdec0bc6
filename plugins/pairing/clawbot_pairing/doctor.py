"""``clawbot doctor``: the senders approved by pairing, and whether they write into the owner's
main session (``session.non_owners_share_main`` with ``dm_scope = "main"``): its history, exec
output and MEMORY.md."""

from __future__ import annotations

import logging
from pathlib import Path

import click
from clawbot.commandkit import CliState, direct_chat_session, is_main_session
from clawbot.types import HealthCheck

from clawbot_pairing.store import PairingError, PairingStore, known_channels

log = logging.getLogger(__name__)


def approved_senders_check(state_dir: Path) -> list[HealthCheck]:
    """One ``sessions`` line naming every sender approved by pairing, a warning when one of
    them reaches the owner's main session; nothing when nobody was approved."""
    context = click.get_current_context(silent=True)
    cli_state = context.find_object(CliState) if context is not None else None
    doors, into_main = [], False
    for channel in known_channels(state_dir):
        try:
            approved = PairingStore.for_channel(state_dir, channel).approved()
        except (OSError, PairingError) as exc:  # a doctor reports, and goes on
            log.warning("the pairing state of %s could not be read: %s", channel, exc)
            continue
        if not approved:
            continue
        doors.append(f"{channel}: approved by pairing: {', '.join(f'{a.sender_id} ({a.sender_name})' if a.sender_name else a.sender_id for a in approved)}")
        sessions = [direct_chat_session(cli_state, channel, a.sender_id) for a in approved]
        into_main = into_main or any(key is not None and is_main_session(key) for key in sessions)
    if not doors:
        return []
    if into_main:
        return [
            HealthCheck(
                "warn",
                "sessions",
                "senders approved by pairing write into the owner's main session"
                f" (its history, exec output and MEMORY.md; session.non_owners_share_main = true): {'; '.join(doors)}",
                "set session.non_owners_share_main = false to give each a session of their own, or `clawbot pairing revoke <channel> <sender>`",
            )
        ]
    return [HealthCheck("ok", "sessions", f"senders approved by pairing each get a session of their own ({'; '.join(doors)})")]
