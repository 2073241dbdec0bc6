"""Who gets in: decided for every message before a command or the agent sees it.

The rules come from the channel's table, ``[channels.<name>]``, when its plugin's config
class derives from :class:`~clawbot.types.ChannelConfig`; otherwise from the channel's
:attr:`~clawbot.types.Channel.default_access` (the :class:`ChannelConfig` defaults unless
the channel says otherwise: the test channel is open, a real network never should be).

* The owner (``from_owner``, or an id in ``agents.defaults.owner_ids`` or the channel's
  ``owner_ids``) always gets in, in direct chats and groups.
* Direct chats, by ``dm_policy``: ``disabled``: nobody else; ``open``: anyone;
  ``allowlist``: ``allow_from`` and the senders a plugin lets in (approved by pairing);
  ``pairing`` (the default): those too, and a plugin may answer a stranger (the pairing
  plugin sends a pairing code), with no answer from the agent. Both ask the plugins through
  ``clawbot_direct_stranger``; with none answering a stranger is refused (fail closed).
  Refused messages get no reply at all, except what such a plugin answers.
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
from collections.abc import Iterable

import attrs

from clawbot.agent.owners import is_owner, owner_ids_for, sender_of
from clawbot.kernel import Kernel
from clawbot.types import Channel, ChannelConfig, InboundMessage, StrangerAnswer, StrangerEvent

log = logging.getLogger(__name__)

STRANGER_HOOK = "clawbot_direct_stranger"


@attrs.frozen
class Verdict:
    """Whether a message gets in; ``why`` is for the log; ``reply``: what to tell the sender
    (a plugin's answer to a stranger, such as a pairing code), else nothing."""

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

    def table(self, channel: Channel) -> ChannelConfig:
        """The channel's access settings: its own table, else what the channel declares."""
        section = self.kernel.config.section(f"channels.{channel.name}")
        if isinstance(section, ChannelConfig):
            return section
        declared = getattr(channel, "default_access", None)
        return declared if isinstance(declared, ChannelConfig) else ChannelConfig()

    def admit(self, channel: Channel, message: InboundMessage, *, command: bool = False, ask: bool = True) -> Verdict:
        """Whether ``message`` (which came in on ``channel``) gets in; ``command``: its text
        is a command clawbot answers (see mention gating above). ``ask=False`` only looks:
        a stranger is turned away without the plugins being asked for a reply (a pairing code)."""
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
        if not sender:
            return Verdict(False, "not in allow_from")
        answer = self._ask_plugins(StrangerEvent(channel, sender, message, ask=ask and config.dm_policy == "pairing"))
        if answer is not None and answer.admitted:
            return Verdict(True, answer.why or "let in by a plugin")
        if config.dm_policy == "allowlist":
            return Verdict(False, "not in allow_from")
        if answer is None:
            return Verdict(False, "a stranger" if ask else "a stranger (only looked)")
        return Verdict(False, answer.why or "a stranger", answer.reply if ask else None)

    def _ask_plugins(self, event: StrangerEvent) -> StrangerAnswer | None:
        """The first plugin's answer about a stranger; one that raises or answers nonsense
        refuses them (fail closed), is recorded, and the channel keeps running."""
        plugins = self.kernel.plugins
        for impl in plugins.impls(STRANGER_HOOK):
            ok, answer = plugins.call_impl_sync(STRANGER_HOOK, impl, ctx=self.kernel.plugin_context(impl.plugin_name), event=event)
            if not ok:
                return StrangerAnswer.refuse(f"plugin {impl.plugin_name} failed")
            if answer is None:
                continue
            if not isinstance(answer, StrangerAnswer):
                plugins.record_failure(impl.plugin_name, STRANGER_HOOK, TypeError(f"expected a StrangerAnswer, got {answer!r:.80}"))
                return StrangerAnswer.refuse(f"plugin {impl.plugin_name} answered {type(answer).__name__}")
            return answer
        return None

    def _group(self, config: ChannelConfig, message: InboundMessage) -> str | None:
        """Why a group message from someone other than the owner is refused, or ``None``."""
        if config.group_policy == "disabled":
            return "groups are disabled"
        if config.group_policy == "allowlist" and not listed(message, config.groups, message.peer_id):
            return "group not in groups"
        if config.group_allow_from and not listed(message, config.group_allow_from, message.sender_id):
            return "sender not in group_allow_from"
        return None
