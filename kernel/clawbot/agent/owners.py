"""Who the owner is: the one person whose word approves commands and controls group chats.

A message is the owner's when its channel says so (``InboundMessage.from_owner``: the
terminal's local user, a chat network's configured owner account) or when its sender is
listed in ``agents.defaults.owner_ids`` or in the ``owner_ids`` of the channel's own table
(``[channels.<name>]``, bare sender ids of that channel: :func:`owner_ids_for` qualifies them).
An entry in ``agents.defaults.owner_ids`` is written either

* ``<channel>:<sender id>`` (``telegram:123456789``): that sender on that channel only, or
* a bare sender id without a colon (``+15550001``): that sender id on every channel.

An entry holding a colon is always read as channel-qualified (split at the first colon), so
a sender id that itself contains a colon must be written with its channel
(``matrix:@me:example.org``), and a sender on one channel can never match an entry meant
for another by choosing an id that looks like ``telegram:123``. A bare id is convenient
for one channel; where some channel lets people pick their own ids, qualify every entry.

Only the sender's own id counts. In a group the peer id is the group, never a person, so
a message without a sender id there belongs to nobody.

A turn's trust (:class:`~clawbot.types.TurnTrust`, :func:`turn_trust`) follows from the
message that started it: the owner's message makes an owner turn, anyone else's a
non-owner turn, whatever session it lands in (a group the owner is in, the main session
under ``dm_scope = "main"``). A clawbot event carries the facts of the message whose turn
caused it (a background command's end, an approval, a sub-agent's report), so it gets that
turn's trust, lowered by whoever wrote in the session since (:func:`event_trust`): the event
answers them too, as a turn answering messages that waited answers all of them. A turn no message started (a cron job, a one-shot ``clawbot agent`` run) is
the owner's unless whoever asked for it says less: a sub-agent and a ``sessions_send`` turn
get the trust of the turn that started them (:class:`~clawbot.agent.turn_options.TurnOptions`).
"""

from __future__ import annotations

from collections.abc import Iterable

from clawbot.config.schema import ClawbotConfig
from clawbot.types import ChannelConfig, InboundMessage, TurnTrust


def sender_of(message: InboundMessage) -> str | None:
    """The id of the person who wrote ``message``: the sender, or the peer of a direct chat."""
    if message.sender_id:
        return message.sender_id
    return message.peer_id if message.chat_type == "direct" else None


def channel_owner_ids(config: ClawbotConfig, channel: str) -> list[str]:
    """The ``owner_ids`` of ``[channels.<channel>]``, each qualified with the channel (so an id
    holding a colon stays that channel's); none when the table is not a :class:`ChannelConfig`."""
    table = config.section(f"channels.{channel}")
    return [f"{channel}:{sender}" for sender in table.owner_ids] if isinstance(table, ChannelConfig) else []


def owner_ids_for(config: ClawbotConfig, channel: str) -> list[str]:
    """Every owner entry that applies on ``channel``: ``agents.defaults.owner_ids`` and the channel's own."""
    return [*config.agents.defaults.owner_ids, *channel_owner_ids(config, channel)]


def listed_as_owner(message: InboundMessage, owner_ids: Iterable[str]) -> bool:
    """Whether ``owner_ids`` (:func:`owner_ids_for`) names the sender of ``message``."""
    sender = sender_of(message)
    if not sender:
        return False
    qualified = f"{message.channel}:{sender}"
    for entry in owner_ids:
        if entry == qualified or (":" not in entry and entry == sender):
            return True
    return False


def is_owner(message: InboundMessage | None, owner_ids: Iterable[str]) -> bool:
    """Whether ``message`` comes from the owner (a system event: whoever started its turn)."""
    if message is None:
        return False
    return message.from_owner or listed_as_owner(message, owner_ids)


def turn_trust(origin: InboundMessage | None, owner_ids: Iterable[str], given: TurnTrust | None = None) -> TurnTrust:
    """Whose word a turn carries: the lower of what its ``origin`` says (no origin says
    nothing) and the ``given`` trust of whoever asked for the turn."""
    said = None if origin is None else TurnTrust.OWNER if is_owner(origin, owner_ids) else TurnTrust.NON_OWNER
    return TurnTrust.least(said, given)
