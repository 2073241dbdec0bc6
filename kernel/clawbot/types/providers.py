"""Interfaces of the swappable engines: LLM providers, memory backends, compaction."""

from __future__ import annotations

import abc
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Literal

import attrs

from clawbot.types.messages import Message


@attrs.frozen
class ModelInfo:
    """What the kernel needs to know about one model."""

    id: str
    context_window: int = 200_000
    max_output_tokens: int = 8_192
    native_tools: bool = True
    #: False when the model is known to take no thinking level: the kernel then sends "off"
    #: instead of paying for a rejected request. Unknown models are assumed to try.
    reasoning: bool = True


@attrs.frozen
class SystemPrompt:
    """The system prompt split at the provider cache boundary."""

    stable: str
    volatile: str = ""

    @property
    def text(self) -> str:
        return f"{self.stable}\n\n{self.volatile}" if self.volatile else self.stable


@attrs.frozen
class ToolSpec:
    """A tool as the model sees it."""

    name: str
    description: str
    parameters: Mapping[str, Any]


@attrs.frozen
class ModelRequest:
    model: str
    system: SystemPrompt
    messages: tuple[Message, ...]
    tools: tuple[ToolSpec, ...] = ()
    thinking: str = "off"
    max_output_tokens: int | None = None
    #: The key of the auth profile the kernel chose; ``None``: the provider's own
    #: configured or environment key. Never logged.
    api_key: str | None = attrs.field(default=None, repr=False)


TextSink = Callable[[str], Awaitable[None]]


class LLMProvider(abc.ABC):
    """A model vendor or compatible server. Must not import its SDK before first use."""

    name: str

    @abc.abstractmethod
    async def complete(self, request: ModelRequest, on_text: TextSink | None = None) -> Message:
        """Run one model call and return the assistant message (with usage and stop reason).

        ``on_text`` receives text deltas as they stream in.
        """

    def model_info(self, model_id: str) -> ModelInfo:
        return ModelInfo(id=model_id)

    def api_key(self) -> str:
        """The key sent when the request carries none (the configured or environment key);
        "" when there is none. The kernel keeps a key's health under a fingerprint of it,
        never the key, so a replaced key is not held back by the old one's failures."""
        return ""

    #: Order in which first-run detection asks providers (lower first).
    detect_priority: int = 100

    async def aclose(self) -> None:  # noqa: B027 - optional
        """Release clients and connections; the kernel calls it when it shuts down."""

    async def detect_default_model(self) -> str | None:
        """The model to use when none is configured, if this provider's credentials are
        present (an API key in the environment, a local server answering); else ``None``."""
        return None


@attrs.frozen
class MemoryHit:
    path: str
    start_line: int
    end_line: int
    score: float
    snippet: str


class MemoryProvider(abc.ABC):
    """A long-term memory index over the workspace's Markdown."""

    name: str

    @abc.abstractmethod
    async def search(self, query: str, *, agent_id: str, max_results: int = 6) -> list[MemoryHit]: ...

    @abc.abstractmethod
    async def sync(self, *, agent_id: str) -> None:
        """Bring the index up to date with the workspace files."""


@attrs.frozen
class CompactionRequest:
    messages: tuple[Message, ...]
    model: str
    instructions: str | None = None
    keep_recent_tokens: int = 20_000


@attrs.frozen
class CompactionResult:
    summary: str
    first_kept_index: int
    tokens_before: int
    tokens_after: int


class CompactionStrategy(abc.ABC):
    """Shrinks a session history that no longer fits the context window."""

    name: str

    @abc.abstractmethod
    async def compact(self, request: CompactionRequest) -> CompactionResult: ...


ProviderErrorKind = Literal[
    "rate_limit",
    "auth",
    "billing",
    "overloaded",
    "server",
    "timeout",
    "connection",
    "context_overflow",
    "thinking_unsupported",
    "role_ordering",
    "unknown_model",
    "invalid_request",
]

#: How an answer the provider had begun to stream broke off: the connection dropped, an event
#: was not valid JSON, or nothing came for longer than the stream's idle timeout.
StreamBreak = Literal["dropped", "garbled", "stalled"]

_USER_MESSAGES: dict[str, str] = {
    "rate_limit": "The model provider is rate-limiting requests. Wait a moment and try again.",
    "auth": "The model provider rejected the API key. Check the key (clawbot doctor) and try again.",
    "billing": "The model provider refused the request for billing reasons. Check your plan or credits.",
    "overloaded": "The model provider is overloaded right now. Try again in a little while.",
    "server": "The model provider had an internal error. Try again.",
    "timeout": "The model took too long to answer. Try again.",
    "connection": "Could not reach the model provider. Check the network or the base_url.",
    "context_overflow": "Context overflow: this conversation is too long for the model's context window. "
    "Try again with less input, start a new session, or pick a model with a larger context window.",
    "role_ordering": "The messages were out of order for the model. Please try again; if it keeps happening, start a new session.",
    "thinking_unsupported": "The model does not support this thinking level. Lower agents.defaults.thinking in clawbot.toml.",
    "unknown_model": "The model provider does not know the model. Check the model name in clawbot.toml.",
    "invalid_request": "The model provider rejected the request.",
}

_BREAK_MESSAGES: dict[str, str] = {
    "dropped": "The model provider dropped the connection in the middle of the answer. Try again.",
    "garbled": "The model provider sent a garbled answer (an event that was not valid JSON). Try again.",
    "stalled": "The model provider stopped sending in the middle of the answer. Try again.",
}

#: The most of a provider's own words a chat notice quotes.
QUOTE_LIMIT = 300


def _quote(text: str) -> str:
    """A provider's words as a notice quotes them: one line, control characters shown as
    ``\\uXXXX``, the notice mark broken up, cut at :data:`QUOTE_LIMIT` characters."""
    from clawbot.safetext import defuse, visible
    from clawbot.types.channels import OutboundMessage

    line = " ".join(text.split())
    if len(line) > QUOTE_LIMIT:
        line = line[: QUOTE_LIMIT - 1] + "\u2026"
    return defuse(visible(line), (OutboundMessage.NOTICE_MARK,))


class ProviderError(Exception):
    """A failed model call, classified so the kernel can retry, rotate keys or fall back.

    ``user_message`` is the short, actionable text shown in chat; ``str(error)`` keeps the
    provider's own detail for logs. Providers fill in ``model`` (the model asked for),
    ``endpoint`` (the base URL called) and, for an answer that broke off mid-stream,
    ``stream_break``; the message then names them.
    """

    def __init__(
        self,
        kind: ProviderErrorKind,
        detail: str = "",
        *,
        status: int | None = None,
        retry_after: float | None = None,
        provider: str | None = None,
        model: str | None = None,
        endpoint: str | None = None,
        stream_break: StreamBreak | None = None,
    ) -> None:
        self.kind = kind
        self.detail = detail
        self.status = status
        self.retry_after = retry_after
        self.provider = provider
        self.model = model
        self.endpoint = endpoint
        self.stream_break = stream_break
        super().__init__(f"{provider or 'provider'} {kind}" + (f" ({status})" if status else "") + (f": {detail}" if detail else ""))

    def __str__(self) -> str:
        text = super().__str__()
        return text + (f" [at {self.endpoint}]" if self.endpoint and self.endpoint not in text else "")

    @property
    def user_message(self) -> str:
        if self.stream_break is not None:
            return _BREAK_MESSAGES[self.stream_break]
        said = f": \u201c{_quote(self.detail)}\u201d" if self.detail.strip() else ""
        if self.kind == "unknown_model" and self.model:
            where = f" at {_quote(self.endpoint)}" if self.endpoint else ""
            return (
                f"The model provider{where} has no model \u201c{_quote(self.model)}\u201d{said}. "
                "Check the model name in clawbot.toml (agents.defaults.model) and the provider's base_url."
            )
        if self.kind == "invalid_request" and said:
            return f"The model provider rejected the request{said}."
        if self.kind == "connection" and self.endpoint:
            return f"Could not reach the model provider at {_quote(self.endpoint)}. Check the network or the base_url."
        return _USER_MESSAGES[self.kind]
