"""Provider-neutral conversation messages.

Providers translate these to and from the Anthropic Messages and OpenAI Chat Completions /
Responses wire formats; transcripts store them as JSON through the kernel's converter.
"""

from __future__ import annotations

import enum
from typing import Any, Literal, Union

import attrs


@attrs.frozen
class TextBlock:
    text: str
    type: Literal["text"] = "text"


@attrs.frozen
class ImageBlock:
    """An image, inline (base64 ``data``) or by ``url``."""

    media_type: str
    data: str | None = None
    url: str | None = None
    type: Literal["image"] = "image"


@attrs.frozen
class ToolCallBlock:
    """A tool call made by the model.

    ``raw_arguments`` keeps the model's text when it was not valid JSON, so the loop can
    answer with an error result the model can correct instead of failing.
    """

    id: str
    name: str
    arguments: dict = attrs.field(factory=dict)
    raw_arguments: str | None = None
    type: Literal["tool_call"] = "tool_call"


@attrs.frozen
class ThinkingBlock:
    text: str
    signature: str | None = None
    redacted: bool = False
    type: Literal["thinking"] = "thinking"


ContentBlock = Union[TextBlock, ImageBlock, ToolCallBlock, ThinkingBlock]  # noqa: UP007 - a runtime alias


class Role(str, enum.Enum):  # noqa: UP042 - str() must stay the enum name
    USER = "user"
    ASSISTANT = "assistant"
    TOOL_RESULT = "tool_result"


class StopReason(str, enum.Enum):  # noqa: UP042
    END_TURN = "end_turn"
    TOOL_USE = "tool_use"
    MAX_TOKENS = "max_tokens"
    STOP_SEQUENCE = "stop_sequence"
    ABORTED = "aborted"
    ERROR = "error"


@attrs.frozen
class Usage:
    """Token counts of one model call, or a sum of several."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cache_read_tokens + other.cache_read_tokens,
            self.cache_write_tokens + other.cache_write_tokens,
        )

    @property
    def prompt_tokens(self) -> int:
        """Every token the model read: fresh input plus cache reads and writes."""
        return self.input_tokens + self.cache_read_tokens + self.cache_write_tokens

    @property
    def cache_hit_share(self) -> float:
        total = self.prompt_tokens
        return self.cache_read_tokens / total if total else 0.0


@attrs.frozen
class Message:
    """One entry of a conversation.

    ``role`` is user, assistant or tool_result. A tool_result answers the assistant's
    ``ToolCallBlock`` whose id is ``tool_call_id``. Assistant messages carry the provider,
    model, usage and stop reason of the call that produced them.

    ``meta`` is set on a user message that came from a chat, an event or another session:
    the facts clawbot knew about it (channel, chat type, sender, ids, time), kept apart from
    the text so the model can get them in full with the newest message and briefly with
    older ones (:mod:`clawbot.agent.user_turns`). ``text`` is then what was written, as it
    arrived; never send such a message to a model as it is.
    """

    role: Role
    content: tuple[ContentBlock, ...] = ()
    tool_call_id: str | None = None
    tool_name: str | None = None
    is_error: bool = False
    provider: str | None = None
    model: str | None = None
    usage: Usage | None = None
    stop_reason: StopReason | None = None
    meta: dict[str, Any] | None = None

    @property
    def text(self) -> str:
        return "".join(b.text for b in self.content if isinstance(b, TextBlock))

    @property
    def tool_calls(self) -> tuple[ToolCallBlock, ...]:
        return tuple(b for b in self.content if isinstance(b, ToolCallBlock))

    @classmethod
    def user(cls, text: str) -> Message:
        return cls(Role.USER, (TextBlock(text),))

    @classmethod
    def assistant(cls, text: str) -> Message:
        return cls(Role.ASSISTANT, (TextBlock(text),))
