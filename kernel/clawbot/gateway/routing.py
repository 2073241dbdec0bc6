"""Which agent answers a message, and in which session: the ``[[bindings]]`` of clawbot.toml.

A binding names an agent and what a message must have for it to apply (``match``: channel,
account, peer, guild, team; a field left out matches anything, but a ``channel`` given must
be the message's). The most specific binding that applies wins, in these tiers:

    peer > guild > team > account (exact) > account "*" > channel > any > the default agent

A binding's tier is its most specific field (one with a peer is a peer binding, whatever
else it names); within a tier the first one listed wins. A binding whose ``match`` is empty
applies to every message, below every other binding. The default agent is ``clawbot run
--agent``, else the one ``agents.list`` marks ``default`` (else its first).

The route also gives the session key (:func:`clawbot.sessions.keys.session_key_for`, by the
agent's id, ``session.dm_scope`` and whether the sender is the owner: under ``main`` only the
owner's DMs reach the main session, unless ``session.non_owners_share_main``) and says what decided it (``matched_by``: ``peer``,
``guild``, ... or ``default``) for the log and ``/whoami``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import attrs

from clawbot.agent.owners import is_owner, owner_ids_for
from clawbot.config.gateway_schema import BindingConfig, BindingMatch
from clawbot.config.schema import ClawbotConfig
from clawbot.sessions.keys import DmScope, session_key_for
from clawbot.types import InboundMessage

#: the tiers, most specific first
TIERS = ("peer", "guild", "team", "account", "account-any", "channel", "any")
DEFAULT = "default"


@attrs.frozen
class Route:
    agent_id: str
    session_key: str
    matched_by: str
    """The tier of the binding that decided (:data:`TIERS`), or ``default``."""
    binding: int | None = None
    """Its index in ``[[bindings]]`` (``None``: the default agent)."""

    def describe(self) -> str:
        """``main (the default agent)`` / ``work (bindings[2], by peer)``, for logs and /whoami."""
        if self.binding is None:
            return f"{self.agent_id} (the default agent)"
        return f"{self.agent_id} (bindings[{self.binding}], by {self.matched_by})"


def tier_of(match: BindingMatch) -> str:
    if match.peer is not None:
        return "peer"
    if match.guild_id:
        return "guild"
    if match.team_id:
        return "team"
    if match.account_id:
        return "account-any" if match.account_id == "*" else "account"
    return "channel" if match.channel else "any"


def applies(match: BindingMatch, message: InboundMessage) -> bool:
    """Whether every field ``match`` gives is the message's."""
    if match.channel and match.channel != message.channel:
        return False
    if match.account_id and match.account_id != "*" and match.account_id != message.account_id:
        return False
    if match.peer is not None:
        kind = message.chat_type
        # a thread lives in its group (or channel): a binding of the group covers its threads
        same_kind = match.peer.kind == kind or (kind == "thread" and match.peer.kind in ("group", "channel"))
        if not same_kind or match.peer.id != message.peer_id:
            return False
    if match.guild_id and match.guild_id != message.guild_id:
        return False
    return not (match.team_id and match.team_id != message.team_id)


def vouched_by_channel(message: InboundMessage) -> bool:
    """The owner as the channel alone knows them (``from_owner``), without ``owner_ids``."""
    return message.from_owner


@attrs.frozen
class Router:
    """Routes messages by ``bindings`` to their agent, ``default_agent`` when none applies.
    ``owner`` says whether a message is the owner's (:meth:`for_config`: by ``owner_ids`` too)."""

    bindings: Sequence[BindingConfig]
    default_agent: str
    dm_scope: DmScope = "main"
    owner: Callable[[InboundMessage], bool] = vouched_by_channel
    non_owners_share_main: bool = False
    _order: tuple[tuple[int, BindingConfig], ...] = attrs.field(init=False)

    def __attrs_post_init__(self) -> None:
        ranked = sorted(enumerate(self.bindings), key=lambda item: (TIERS.index(tier_of(item[1].match)), item[0]))
        object.__setattr__(self, "_order", tuple(ranked))

    @classmethod
    def for_config(cls, config: ClawbotConfig, default_agent: str) -> Router:
        """The router of ``config``: its bindings and session settings, its owners."""

        def owner(message: InboundMessage) -> bool:
            return is_owner(message, owner_ids_for(config, message.channel))

        session = config.session
        return cls(config.bindings, default_agent, session.dm_scope, owner, session.non_owners_share_main)

    def session_key(self, agent_id: str, message: InboundMessage) -> str:
        return session_key_for(agent_id, message, self.dm_scope, owner=self.owner(message), non_owners_share_main=self.non_owners_share_main)

    def route(self, message: InboundMessage) -> Route:
        for index, binding in self._order:
            if applies(binding.match, message):
                return Route(binding.agent_id, self.session_key(binding.agent_id, message), tier_of(binding.match), index)
        return Route(self.default_agent, self.session_key(self.default_agent, message), DEFAULT)
