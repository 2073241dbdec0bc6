"""What every chat channel's table shares, and what a channel says it can do.

A channel plugin's config class derives from :class:`ChannelConfig`, so that the gateway
can decide who gets in (``dm_policy``, ``group_policy``, ...) the same way on every channel,
whatever else the plugin's table holds::

    @attrs.frozen(kw_only=True)
    class TelegramConfig(ChannelConfig):
        token: str = attrs.field(repr=False)

A channel that marks its messages ``from_owner`` itself (the terminal) needs none of this.
"""

from __future__ import annotations

from typing import List, Literal  # noqa: UP035 - cattrs structures typing.List in config classes

import attrs

from clawbot.types.context import OutOfRange

DmPolicy = Literal["pairing", "allowlist", "open", "disabled"]
GroupPolicy = Literal["allowlist", "open", "disabled"]
#: How a surface renders text: ``"plain"`` (shown as typed), ``"markdown"``, or the name of
#: a markup of the channel's own that it converts replies into (Telegram's ``"telegram-html"``).
#: The channel's own data: the kernel passes it on and names no channel's markup.
MarkdownFlavour = str


def _open_needs_star(instance: ChannelConfig, attribute: attrs.Attribute, value: str) -> None:
    if value == "open" and "*" not in instance.allow_from:
        raise OutOfRange("dm_policy", '"open" lets anyone in: say so with allow_from = ["*"]')


@attrs.frozen(kw_only=True)
class ChannelConfig:
    """The access settings of one channel (``[channels.<name>]``).

    * ``dm_policy``: who may talk to the agent in a direct chat. ``pairing`` (the default):
      a stranger is the plugins' to answer (``clawbot_direct_stranger``: the pairing plugin
      sends a one-time code, and no answer until the owner runs ``clawbot pairing approve
      <channel> <code>``), refused silently when none does; ``allowlist``: only
      ``allow_from`` (and those a plugin lets in: approved by pairing); ``open``: anyone
      (needs ``allow_from = ["*"]``); ``disabled``: no direct chats.
    * ``allow_from``: sender ids let in without pairing (``"*"``: everyone).
    * ``group_policy``: ``allowlist`` (the default: only ``groups``), ``open`` (any group the
      bot is in) or ``disabled``. ``groups``: group ids allowed (``"*"``: all).
    * ``group_allow_from``: sender ids who may address the agent in an allowed group (empty:
      anyone there). ``require_mention``: in groups, answer only messages that mention the
      bot or reply to it.
    * ``owner_ids``: this channel's sender ids of the owner, who alone approves commands and
      runs control commands (also in groups).
    """

    enabled: bool = True
    dm_policy: DmPolicy = attrs.field(default="pairing", validator=_open_needs_star)
    allow_from: List[str] = attrs.field(factory=list)  # noqa: UP006
    group_policy: GroupPolicy = "allowlist"
    groups: List[str] = attrs.field(factory=list)  # noqa: UP006
    group_allow_from: List[str] = attrs.field(factory=list)  # noqa: UP006
    require_mention: bool = True
    owner_ids: List[str] = attrs.field(factory=list)  # noqa: UP006


@attrs.frozen
class ChannelCapabilities:
    """What a channel's surface can show, so the gateway shapes replies for it.

    ``max_text_length``: longest message the surface takes; longer replies are sent in
    pieces cut at paragraph breaks, never inside a code fence (0: no limit).
    ``markdown``: how the surface renders text (:data:`MarkdownFlavour`). ``edit``: :meth:`Channel.edit` works, so a
    reply can stream by editing one message. ``typing``: :meth:`Channel.typing` shows an
    indicator, which the gateway refreshes every ``typing_interval_s`` while a turn runs.
    ``media``: attachments can be sent (``OutboundMessage.media``). ``replies``: a message
    can answer another one natively (``OutboundMessage.reply_to_id``). ``threads`` and
    ``reactions``: what the words say.
    """

    max_text_length: int = 0
    markdown: MarkdownFlavour = "plain"
    edit: bool = False
    typing: bool = False
    typing_interval_s: float = 6.0
    media: bool = False
    threads: bool = False
    reactions: bool = False
    replies: bool = False
    unprompted: bool = True
    """A message nobody is waiting for (a heartbeat's or a cron job's report) reaches the chat
    later; ``False`` for a surface that only answers requests while they are open."""

    def names(self) -> tuple[str, ...]:
        """The features the surface has, as the system prompt's runtime line names them."""
        flags = ("edit", "media", "reactions", "replies", "threads", "typing")
        return tuple(sorted(flag for flag in flags if getattr(self, flag)))
