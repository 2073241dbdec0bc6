"""The ``[gateway]`` table and the ``[[bindings]]`` list of ``clawbot.toml``."""

from __future__ import annotations

import difflib
from collections.abc import Iterator, Sequence
from typing import List, Literal  # noqa: UP035 - cattrs structures typing.List in the config classes

import attrs

from clawbot.config.problems import ConfigProblem
from clawbot.types.context import InRange

LOOPBACK = "127.0.0.1"
DEFAULT_PORT = 18789


@attrs.frozen(kw_only=True)
class QueueConfig:
    """What happens to messages that arrive while the session's turn runs.

    ``collect`` (the default): they wait, and once the turn is over the ones that arrived
    (after ``debounce_ms`` of quiet) are answered together as one next turn. ``followup``:
    each is answered as its own turn, in order. At most ``cap`` wait per session; the oldest
    are dropped past that (the sender is told).
    """

    mode: Literal["collect", "followup"] = "collect"
    debounce_ms: int = attrs.field(default=1_000, validator=InRange(0, 60_000))
    cap: int = attrs.field(default=20, validator=InRange(1, 1_000))


@attrs.frozen(kw_only=True)
class GatewayConfig:
    """``clawbot run``: its control API and how many turns run at once.

    ``bind``/``port``: where the control API listens (``port = 0``: any free port, written
    to the state dir). Binding beyond loopback must be asked for here and still needs the
    token. ``control_api = false`` runs the channels without the API. ``max_concurrent``:
    turns running at once across all sessions (one per session at a time, always).
    ``shutdown_grace_s``: on stop, how long running turns may take to finish before they are
    cancelled and recorded as interrupted.
    """

    bind: str = LOOPBACK
    port: int = attrs.field(default=DEFAULT_PORT, validator=InRange(0, 65_535))
    control_api: bool = True
    max_concurrent: int = attrs.field(default=4, validator=InRange(1, 10_000))
    queue: QueueConfig = attrs.field(factory=QueueConfig)
    shutdown_grace_s: float = attrs.field(default=10.0, validator=InRange(0, 3_600))


@attrs.frozen(kw_only=True)
class PeerMatch:
    kind: Literal["direct", "group", "channel", "thread"]
    id: str


@attrs.frozen(kw_only=True)
class BindingMatch:
    """What a message must have for a binding to apply; empty fields match anything.
    ``account_id = "*"`` matches every account of the channel (below an exact account)."""

    channel: str = ""
    account_id: str = ""
    peer: PeerMatch | None = None
    guild_id: str = ""
    team_id: str = ""


@attrs.frozen(kw_only=True)
class BindingConfig:
    """``[[bindings]]``: route the messages ``match`` describes to the agent ``agent_id``.

    The most specific binding wins: peer > guild > team > account (exact) > account "*" >
    channel > the default agent; within one tier, the first listed."""

    agent_id: str
    match: BindingMatch = attrs.field(factory=BindingMatch)


Bindings = List[BindingConfig]  # noqa: UP006


def binding_problems(bindings: Sequence[BindingConfig], agent_ids: Sequence[str]) -> Iterator[ConfigProblem]:
    """A problem for each binding naming an agent that ``agents.list`` does not configure:
    its messages would go to an agent without a workspace or model of its own."""
    for index, binding in enumerate(bindings):
        if binding.agent_id in agent_ids:
            continue
        close = difflib.get_close_matches(binding.agent_id, list(agent_ids), n=1)
        hint = f"did you mean {close[0]}?" if close else f"configured agents: {', '.join(agent_ids) or 'none'}"
        yield ConfigProblem(f"bindings[{index}].agent_id", f"no agent {binding.agent_id!r} in agents.list ({hint})")
