"""The answer to a stranger in a direct chat (``clawbot_direct_stranger``): an approved sender
is let in; a new one gets a code, sent again at most every few minutes however often they
write; nobody gets one while the channel account's queue is full."""

from __future__ import annotations

from pathlib import Path

from clawbot.types import StrangerAnswer, StrangerEvent

from clawbot_pairing.store import PairingStore

PAIRING_REPLY = (
    "Hi! I don't know you yet, so I can't answer here until my owner lets you in.\n"
    "Your pairing code: {code} (valid for 1 hour).\n"
    "Ask my owner to run: clawbot pairing approve {channel} {code}"
)


def answer_stranger(state_dir: Path, event: StrangerEvent) -> StrangerAnswer:
    """Let ``event``'s sender in if approved; else, when the gateway asks, hand out their code."""
    # a store per message: it reads the small file each time; kept per kernel (plugin state),
    # one store per channel would cost a busy channel one stat instead
    store = PairingStore.for_channel(state_dir, event.channel)
    if store.is_approved(event.sender_id):
        return StrangerAnswer.admit("paired")
    if not event.ask:
        return StrangerAnswer.refuse("a stranger")
    asked = store.ask(event.sender_id, event.message.account_id, event.message.sender_name or "")
    if asked.code is None:
        return StrangerAnswer.refuse("a stranger, with too many pairing requests pending")
    reply = PAIRING_REPLY.format(code=asked.code, channel=event.channel) if asked.reply else None
    return StrangerAnswer.refuse("a stranger: pairing", reply)
