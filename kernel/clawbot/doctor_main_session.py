"""``clawbot doctor``: who other than the owner can write into an agent's direct chats.

The main session holds the owner's history (their exec output) and loads MEMORY.md. Only
the owner's direct messages reach it unless ``session.non_owners_share_main`` is set with
``dm_scope = "main"``; then every channel whose direct chats let someone else in by its own
rules (``dm_policy = "open"``, ``allow_from``) is named, with its keys. The senders a plugin
lets in (approved by pairing) are that plugin's to report (its ``clawbot_doctor_checks``).

A channel on ``dm_policy = "pairing"`` with no plugin answering for strangers
(``clawbot_direct_stranger``: the pairing plugin blocked or not installed) refuses every
stranger silently, and nobody can be approved: that is said too.
"""

from __future__ import annotations

from typing import Any

from clawbot.doctor_findings import Finding
from clawbot.gateway.access import STRANGER_HOOK, Access
from clawbot.gateway.runner import enabled_channels
from clawbot.types import ChannelConfig

SHARED_KEY = "session.non_owners_share_main"


def non_owner_doors(kernel: Any) -> list[str]:
    """Each way the channels' own rules let someone other than the owner into a direct chat,
    naming its channel and key."""
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
    return doors


def check_strangers_answered(kernel: Any) -> list[Finding]:
    """A warning for channels on ``dm_policy = "pairing"`` that no plugin answers strangers for."""
    if kernel.plugins.impls(STRANGER_HOOK):
        return []
    # a channel the user configured (its own [channels.<name>] table): the terminal and the web
    # chat, which take the owner's messages alone, never meet a stranger
    silent = [
        channel.name
        for channel in enabled_channels(kernel)
        if isinstance(table := kernel.config.section(f"channels.{channel.name}"), ChannelConfig) and table.dm_policy == "pairing"
    ]
    if not silent:
        return []
    return [
        Finding(
            "warn",
            "access",
            f'{", ".join(silent)}: dm_policy = "pairing" but no plugin answers strangers ({STRANGER_HOOK}):'
            " they are refused silently and nobody can be approved",
            'install or unblock the pairing plugin (clawbot-pairing), or set dm_policy = "allowlist" to say what you mean',
        )
    ]


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
                f"set {SHARED_KEY} = false to give each a session of their own, or let fewer in (the allow_from lists)",
            )
        ]
    return [Finding("ok", "sessions", f"the main session is the owner's alone; everyone else gets a session of their own ({'; '.join(doors)})")]
