"""``agents.defaults.heartbeat`` and ``agents.defaults.subagents`` (``[cron]`` is the automation plugin's)."""

from __future__ import annotations

import re
from typing import Any, Literal

import attrs

from clawbot.types.context import InRange, OutOfRange
from clawbot.types.settings import DEFAULT_HEARTBEAT_PROMPT

_CLOCK = re.compile(r"([01]\d|2[0-4]):[0-5]\d")


def _clock_time(instance: object, attribute: attrs.Attribute, value: str) -> None:
    if value and not _CLOCK.fullmatch(value):
        raise OutOfRange(attribute.name, f'must be a time of day as "HH:MM" (24 h), or empty; got {value!r}')


@attrs.frozen(kw_only=True)
class HeartbeatConfig:
    """A periodic turn in each agent's main session, checking HEARTBEAT.md.

    ``every_minutes`` apart (0: off), only between ``active_from`` and ``active_until`` in
    the user's timezone (empty: all day; ``active_until`` before ``active_from`` spans
    midnight). ``model``: a cheaper model for heartbeats (empty: the agent's own).
    ``prompt`` is what the heartbeat turn says; a reply that is ``HEARTBEAT_OK`` with at
    most ``ack_max_chars`` of other text is not delivered. ``target`` is where a reply that
    is delivered goes: ``last`` (the chat the main session last heard from) or ``none``.
    """

    every_minutes: int = attrs.field(default=30, validator=InRange(0, 7 * 24 * 60))
    active_from: str = attrs.field(default="", validator=_clock_time)
    active_until: str = attrs.field(default="", validator=_clock_time)
    model: str = ""
    prompt: str = DEFAULT_HEARTBEAT_PROMPT
    ack_max_chars: int = attrs.field(default=300, validator=InRange(0, 100_000))
    target: Literal["last", "none"] = "last"


@attrs.frozen(kw_only=True)
class AgentHeartbeatConfig:
    """``agents.list[].heartbeat``: this agent's own cadence and model (unset: the defaults')."""

    every_minutes: int | None = attrs.field(default=None, validator=InRange(0, 7 * 24 * 60))
    model: str | None = None


@attrs.frozen(kw_only=True)
class SubagentsConfig:
    """``sessions_spawn``: at most ``max_concurrent`` sub-agents run at once (all agents),
    a sub-agent may spawn its own only ``max_depth`` levels deep (1: sub-agents spawn none),
    and one runs at most ``timeout_s`` unless the spawn asks for less."""

    max_concurrent: int = attrs.field(default=8, validator=InRange(1, 1_000))
    max_depth: int = attrs.field(default=1, validator=InRange(1, 10))
    timeout_s: int = attrs.field(default=600, validator=InRange(1, 24 * 3600))


def heartbeat_minutes(config: Any, agent_id: str) -> int:
    """How often ``agent_id``'s heartbeat runs (0: off): its own ``every_minutes`` over the defaults'."""
    own = getattr(config.agent(agent_id), "heartbeat", None)
    return own.every_minutes if own is not None and own.every_minutes is not None else config.agents.defaults.heartbeat.every_minutes
