"""Real agent turns in a plugin's tests: :class:`TestConversation` and what a turn answered."""

from __future__ import annotations

from pathlib import Path

import attrs

from clawbot.agent.conversation import Conversation, TurnResult
from clawbot.types import TextSink


@attrs.frozen
class TurnReply:
    """What one turn answered: the reply ``text``, the ``model`` that gave it, how many model
    calls (``iterations``) and tool calls it took, why it stopped early (``stopped``:
    ``"iteration_limit"``, ``"aborted"`` or ``None``) and clawbot's own ``notices``."""

    text: str
    model: str
    iterations: int
    tool_calls: int
    stopped: str | None
    notices: tuple[str, ...]

    @classmethod
    def of(cls, result: TurnResult) -> TurnReply:
        return cls(result.text, result.model, result.iterations, result.tool_calls, result.stopped, result.notices)


class TestConversation:
    """One agent of a test kernel answering with one model (``TestKernel.conversation``)."""

    __test__ = False  # a helper, not a test class for pytest to collect

    def __init__(self, conversation: Conversation) -> None:
        self._conversation = conversation

    @property
    def workspace(self) -> Path:
        """The agent's workspace, where its file tools read and write."""
        return Path(self._conversation.workspace)

    async def send(self, session_key: str, text: str, *, on_text: TextSink | None = None) -> TurnReply:
        """Run one turn of ``session_key`` answering ``text``, tools and hooks included;
        ``on_text`` gets the reply's text as it streams (what a chat would show)."""
        return TurnReply.of(await self._conversation.send(session_key, text, on_text=on_text))

    async def system_prompt(self, session_key: str, channel: str | None = None) -> str:
        """The system prompt a turn of ``session_key`` (from ``channel``) would send."""
        return (await self._conversation.system_prompt(session_key, channel)).text
