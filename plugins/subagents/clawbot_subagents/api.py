"""What other plugins' tools may use: the :class:`Subagents` capability and its summaries.

A tool asks for it with ``call.services.capability(Subagents)``; it is bound to the tool
call's session, so a tool starts sub-agents of the session it runs in and sees only those.
"""

from __future__ import annotations

import abc

import attrs


@attrs.frozen
class SubagentSummary:
    """A sub-agent run: its session (``agent:<id>:subagent:<run id>``), what it was asked,
    and where it stands (``running``, ``done``, ``failed``, ``stopped``, ``timed out``)."""

    run_id: str
    session_key: str
    agent_id: str
    task: str
    status: str
    started_at: str
    parent_session_key: str = ""


class Subagents(abc.ABC):
    """Sub-agents as one session sees them: the ones it starts, the ones it started."""

    @abc.abstractmethod
    async def spawn(self, task: str, *, agent_id: str | None = None, model: str | None = None, timeout_s: float | None = None) -> SubagentSummary:
        """Start a sub-agent on ``task`` in a session of its own; returns at once. Its result
        is announced back to this session when it ends (a system event). ``agent_id``: the
        agent to run it (the caller checks this session may reach it); raises
        :class:`~clawbot.ServiceUnavailable` with a sentence for the model when it cannot start."""

    @abc.abstractmethod
    def started(self) -> list[SubagentSummary]:
        """The sub-agents this session started, newest first."""
