"""Runs clawbot starts on its own (heartbeats, cron jobs, sub-agents) and how each turn ended.

Cron jobs themselves are the automation plugin's (``clawbot_automation.records``).
"""

from __future__ import annotations

from typing import Literal

import attrs

from clawbot.types.messages import Usage

RunKind = Literal["chat", "heartbeat", "cron", "subagent", "system"]
"""What started a turn; ``system``: a plugin's service or capability (:meth:`AgentHost.run_turn`)."""


@attrs.frozen
class AgentEndEvent:
    """Passed to ``clawbot_agent_end`` after every agent turn, whatever started it."""

    agent_id: str
    session_key: str
    kind: RunKind
    status: Literal["ok", "error", "aborted"]
    usage: Usage = attrs.field(factory=Usage)
