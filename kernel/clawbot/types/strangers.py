"""A stranger in a direct chat: what the gateway asks plugins through ``clawbot_direct_stranger``.

The kernel keeps the access rules (the owner, ``dm_policy``, ``allow_from``, groups, mention
gating). A direct message that those rules do not let in by themselves, on a channel whose
``dm_policy`` is ``pairing`` or ``allowlist``, is handed to the plugins: one may know the
sender (approved earlier) or answer with a reply (a pairing code). Nobody answering means
refused, silently.
"""

from __future__ import annotations

import attrs

from clawbot.types.channels import InboundMessage


@attrs.frozen
class StrangerEvent:
    """A direct message from someone the channel's own rules do not let in.

    ``sender_id`` is the sender as the access rules name them (the sender, else the peer of
    the direct chat); ``message`` carries the rest (``account_id``, ``sender_name``). With
    ``ask`` false the plugin only looks (the sender is let in or not) and must change nothing
    nor offer a reply: the gateway asks that way when a channel checks a message before costly
    work, and on ``dm_policy = "allowlist"``, where strangers get no reply.
    """

    channel: str
    sender_id: str
    message: InboundMessage
    ask: bool = True


@attrs.frozen
class StrangerAnswer:
    """A plugin's answer about a stranger: ``admitted`` (approved earlier), or refused, with
    ``reply``, clawbot's words to send them (a pairing code), or none. ``why`` is for the log."""

    admitted: bool
    why: str = ""
    reply: str | None = None

    @classmethod
    def admit(cls, why: str) -> StrangerAnswer:
        return cls(True, why)

    @classmethod
    def refuse(cls, why: str, reply: str | None = None) -> StrangerAnswer:
        return cls(False, why, reply)
