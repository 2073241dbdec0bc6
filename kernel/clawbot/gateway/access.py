"""Who gets in: decided for every message before a command or the agent sees it.

The rules come from the channel's table, ``[channels.<name>]``, when its plugin's config
class derives from :class:`~clawbot.types.ChannelConfig`; otherwise from the channel's
:attr:`~clawbot.types.Channel.default_access` (the :class:`ChannelConfig` defaults unless
the channel says otherwise: the test channel is open, a real network never should be).

* The owner (``from_owner``, or an id in ``agents.defaults.owner_ids`` or the channel's
  ``owner_ids``) always gets in, in direct chats and groups.
* Direct chats, by ``dm_policy``: ``disabled``: nobody else; ``open``: anyone;
  ``allowlist``: ``allow_from`` and the senders approved by pairing; ``pairing`` (the
  default): those too, and a stranger gets a pairing code (:mod:`clawbot.gateway.pairing`)
  and no answer from the agent. Refused messages get no reply at all, except that code.
* Groups (and their threads and channels), by ``group_policy``: ``disabled``: none;
  ``open``: any group; ``allowlist`` (the default, failing closed): only ``groups``. In an
  allowed group, ``group_allow_from`` (when set) says which senders may address the agent.
* Mention gating (``require_mention``, groups only): a group message that does not mention
  the bot (``InboundMessage.mentioned``; a channel sets it for a reply to the bot's message,
  and for a command addressed to it, ``/status@bot``) is ignored, silently. A command
  clawbot answers, sent by the owner, counts as addressed to the bot, as in OpenClaw: the
  owner's ``/stop`` works without a mention; anyone else's command needs one like any
  chat (and is then refused by the command's own rule if it is the owner's alone).

Ids in ``allow_from``, ``group_allow_from`` and ``groups`` are the channel's own, bare
(``123``) or with the channel's name (``telegram:123``); ``"*"`` is everyone.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable

import attrs

from clawbot.agent.owners import is_owner, owner_ids_for, sender_of
from clawbot.gateway.pairing import PairingStore
from clawbot.kernel import Kernel
from clawbot.types import Channel, ChannelConfig, InboundMessage

log = logging.getLogger(__name__)

PAIRING_REPLY = (
    "Hi! I don't know you yet, so I can't answer here until my owner lets you in.\n"
    "Your pairing code: {code} (valid for 1 hour).\n"
    "Ask my owner to run: clawbot pairing approve {channel} {code}"
)


@attrs.frozen
class Verdict:
    """Whether a message gets in; ``why`` is for the log; ``reply``: what to tell the sender
    (a pairing code), else nothing."""

    admitted: bool
    why: str
    reply: str | None = None


def listed(message: InboundMessage, entries: Iterable[str], ident: str | None) -> bool:
    """Whether ``entries`` hold ``"*"`` or ``ident`` (bare, or with the message's channel)."""
    names = set(entries)
    if "*" in names:
        return True
    return bool(ident) and (ident in names or f"{message.channel}:{ident}" in names)


@attrs.define
class Access:
    kernel: Kernel
    clock: Callable[[], float] = time.time
    _stores: dict[str, PairingStore] = attrs.field(factory=dict)

    def table(self, channel: Channel) -> ChannelConfig:
        """The channel's access settings: its own table, else what the channel declares."""
        section = self.kernel.config.section(f"channels.{channel.name}")
        if isinstance(section, ChannelConfig):
            return section
        declared = getattr(channel, "default_access", None)
        return declared if isinstance(declared, ChannelConfig) else ChannelConfig()

    def pairing(self, channel: str) -> PairingStore:
        store = self._stores.get(channel)
        if store is None:
            store = self._stores[channel] = PairingStore.for_channel(self.kernel.paths.root, channel, self.clock)
        return store

    def admit(self, channel: Channel, message: InboundMessage, *, command: bool = False, ask: bool = True) -> Verdict:
        """Whether ``message`` (which came in on ``channel``) gets in; ``command``: its text
        is a command clawbot answers (see mention gating above). ``ask=False`` only looks:
        a stranger is turned away without a pairing code being asked for or sent."""
        config = self.table(channel)
        owner = is_owner(message, owner_ids_for(self.kernel.config, channel.name))
        if message.chat_type == "direct":
            return Verdict(True, "owner") if owner else self._direct(channel.name, config, message, ask)
        if not owner:
            refused = self._group(config, message)
            if refused is not None:
                return Verdict(False, refused)
        if config.require_mention and not message.mentioned and not (owner and command):
            return Verdict(False, "not mentioned in a group")
        return Verdict(True, "owner" if owner else "group")

    def _direct(self, channel: str, config: ChannelConfig, message: InboundMessage, ask: bool = True) -> Verdict:
        sender = sender_of(message)
        if config.dm_policy == "disabled":
            return Verdict(False, "direct chats are disabled")
        if config.dm_policy == "open" or listed(message, config.allow_from, sender):
            return Verdict(True, "allow_from")
        if sender and self._paired(channel, sender):
            return Verdict(True, "paired")
        if config.dm_policy == "allowlist" or not sender:
            return Verdict(False, "not in allow_from")
        if not ask:
            return Verdict(False, "a stranger")
        try:
            asked = self.pairing(channel).ask(sender, message.account_id, message.sender_name or "")
        except Exception:  # a state dir that cannot be written must not take the channel down
            log.exception("pairing on %s failed", channel)
            return Verdict(False, "pairing failed")
        if asked.code is None:
            return Verdict(False, "a stranger, with too many pairing requests pending")
        reply = PAIRING_REPLY.format(code=asked.code, channel=channel) if asked.reply else None
        return Verdict(False, "a stranger: pairing", reply)

    def _paired(self, channel: str, sender: str) -> bool:
        try:
            return self.pairing(channel).is_approved(sender)
        except Exception:
            log.exception("reading the pairing state of %s failed", channel)
            return False

    def _group(self, config: ChannelConfig, message: InboundMessage) -> str | None:
        """Why a group message from someone other than the owner is refused, or ``None``."""
        if config.group_policy == "disabled":
            return "groups are disabled"
        if config.group_policy == "allowlist" and not listed(message, config.groups, message.peer_id):
            return "group not in groups"
        if config.group_allow_from and not listed(message, config.group_allow_from, message.sender_id):
            return "sender not in group_allow_from"
        return None
