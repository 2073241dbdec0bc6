"""What one turn runs with beyond its text: a chat's directives and who watches its steps.

A message may start with directives (``/think high /model fast what is 17*23?``): they set
the thinking level and the model for that turn only, over what the session has stored
(``/think``, ``/model``) and what is configured. The watchers see each model reply as it
arrives (its reasoning, its tool calls) and each step's tool results once they ran: what
``/reasoning`` and ``/verbose`` show in the chat.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence

import attrs

from clawbot.types import Message, RunKind, ToolCallBlock, TurnTrust

ReplyWatcher = Callable[[Message], Awaitable[None]]
ResultsWatcher = Callable[[Sequence[ToolCallBlock], Sequence[Message]], Awaitable[None]]


@attrs.frozen
class TurnOptions:
    thinking: str | None = None
    """The thinking level of this turn only (``None``: the session's, else the configured one)."""
    model: str | None = None
    """The model ref (or alias) of this turn only, without fallback (``None``: the session's)."""
    on_reply: ReplyWatcher | None = None
    """Each model reply, as soon as it arrived (before its tool calls run)."""
    on_tool_results: ResultsWatcher | None = None
    """A reply's tool calls and their results, once they all ran."""
    kind: RunKind = "chat"
    """What started the turn (``clawbot_agent_end`` tells plugins): a chat message, a
    heartbeat, a cron job or a sub-agent."""
    trust: TurnTrust | None = None
    """The trust of whoever asked for this turn when no message of theirs starts it (a
    sub-agent's parent, a ``sessions_send``): the turn gets no more than that
    (:func:`~clawbot.agent.owners.turn_trust`). ``None``: the message's alone."""
