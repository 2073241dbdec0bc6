"""Whose word a turn carries: the owner's, or someone else's.

A turn is :attr:`TurnTrust.OWNER` when the message that started it is the owner's (see
:mod:`clawbot.agent.owners`), or when clawbot started it from what only the owner can set
up: a cron job, the heartbeat, a one-shot ``clawbot agent`` run at the user's terminal.
Everything that follows from a turn keeps its trust: the system events it causes (a
background command's end, an approval's outcome; lowered by whoever wrote in the session
since, whom the event's turn answers too), the sub-agents it starts and their reports, the
turns its ``sessions_send`` runs elsewhere, the memory flush beside it, the background
commands it starts (a less trusted turn may watch them, not write to or kill them). A turn
is never more trusted than what started it.

A turn that is not the owner's (a group member, a paired stranger, or whatever such a turn
set going) cannot change what later feeds the owner's turns: the workspace is read-only to
its tools and its commands, it manages no cron jobs, asks for no approvals and the memory
flush does not run in it.
"""

from __future__ import annotations

import enum


class TurnTrust(enum.Enum):
    OWNER = "owner"
    """The owner started it (or clawbot did, from the owner's own configuration)."""
    NON_OWNER = "non-owner"
    """Someone else started it, directly or through a turn of theirs."""

    @classmethod
    def least(cls, *trusts: TurnTrust | None) -> TurnTrust:
        """The lowest of ``trusts`` (``None`` says nothing): owner only when every one is."""
        return cls.NON_OWNER if cls.NON_OWNER in trusts else cls.OWNER
