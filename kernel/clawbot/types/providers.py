"""Interfaces of the swappable engines: LLM providers, memory backends, compaction."""

from __future__ import annotations

import abc
from collections.abc import Awaitable, Callable, Mapping, Sequence
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


MemoryMode = Literal["hybrid", "keyword", "vector", "unavailable"]


@attrs.frozen
class MemoryHit:
    """One search result: a stretch of a memory file, how well it matched, and its text.

    ``path`` is relative to the agent's workspace (``memory/2026-01-20.md``); a file under a
    configured extra path outside the workspace is shown by its absolute path. Lines are
    1-based and inclusive. ``source`` says which kind of memory it came from (``memory`` for
    MEMORY.md and memory/**, ``extra`` for configured extra paths).
    """

    path: str
    start_line: int
    end_line: int
    score: float
    snippet: str
    source: str = "memory"


@attrs.frozen
class MemorySearch:
    """What one search found and how it searched: ``mode`` is what this query used (an
    embedder that failed leaves ``keyword``), ``notice`` says why when it is less than the
    configured mode, in a sentence for the model and the user."""

    hits: tuple[MemoryHit, ...]
    mode: MemoryMode
    provider: str | None = None  # the embedding provider, e.g. "local", "openai"; None: no vectors
    model: str | None = None
    notice: str | None = None


@attrs.frozen
class MemoryExcerpt:
    """Lines of one memory file (``memory_get``): ``start_line``..``end_line`` of
    ``total_lines`` (``end_line`` < ``start_line`` when the range is past the end)."""

    path: str
    start_line: int
    end_line: int
    total_lines: int
    text: str


class MemoryPathError(ValueError):
    """``get()`` of something that is not memory: outside the workspace and the extra paths,
    not Markdown, or missing. ``str(exc)`` says which, for the model."""


@attrs.frozen
class MemorySyncProgress:
    """Reported while a sync runs: ``done`` of ``total`` files, the one being indexed."""

    done: int
    total: int
    path: str


@attrs.frozen
class MemorySyncReport:
    files_indexed: int = 0  # new or changed, chunked again
    files_unchanged: int = 0
    files_removed: int = 0  # gone from disk, gone from the index
    chunks: int = 0  # in the index afterwards
    embedded: int = 0  # chunk texts sent to the embedder
    cache_hits: int = 0  # chunk texts whose vector came from the cache
    skipped: tuple[tuple[str, str], ...] = ()  # (path, why): unreadable, not UTF-8, outside the allowed roots
    seconds: float = 0.0


@attrs.frozen
class MemoryStatus:
    """How one agent's memory index stands, for ``clawbot memory status`` and ``doctor``.

    ``mode`` is what a search uses now; ``reasons`` say, a sentence each, why it is less than
    hybrid (sqlite-vec could not load, FTS5 is missing, no embedder configured, the embedder
    failed: ``last_error``).
    """

    provider: str
    agent_id: str
    mode: MemoryMode
    reasons: tuple[str, ...] = ()
    files: int = 0
    chunks: int = 0
    index_path: str | None = None
    index_bytes: int = 0
    embedder: str | None = None  # "local all-MiniLM-L6-v2 (384 dims)"
    vector_backend: str | None = None  # "sqlite-vec v0.1.9", "in-process cosine"
    keyword_backend: str | None = None  # "FTS5"
    driver: str | None = None  # the sqlite module in use and why it was chosen
    dirty: bool = False  # files changed since the last sync
    last_sync: str | None = None  # ISO time of the last complete sync
    last_error: str | None = None
    watching: bool = False
    details: Mapping[str, Any] = attrs.field(factory=dict)  # backend-specific figures


class MemoryProvider(abc.ABC):
    """A long-term memory index over the agents' workspace Markdown (MEMORY.md, memory/**).

    The Markdown is the source of truth; an index may be deleted and rebuilt at any time.
    Every method is scoped to one agent: one agent's search never sees another's files.
    ``max_results`` and ``min_score`` left ``None`` mean the provider's configured defaults.
    """

    name: str

    @abc.abstractmethod
    async def search(self, query: str, *, agent_id: str, max_results: int | None = None, min_score: float | None = None) -> MemorySearch: ...

    @abc.abstractmethod
    async def get(self, path: str, *, agent_id: str, from_line: int = 1, lines: int | None = None) -> MemoryExcerpt:
        """Lines of a memory file; raises :class:`MemoryPathError` for anything else."""

    @abc.abstractmethod
    async def sync(self, *, agent_id: str, force: bool = False, progress: Callable[[MemorySyncProgress], None] | None = None) -> MemorySyncReport:
        """Bring the index up to date with the files (``force``: re-chunk and re-index every file)."""

    @abc.abstractmethod
    async def status(self, *, agent_id: str) -> MemoryStatus: ...

    async def start(self, *, agent_ids: Sequence[str]) -> None:  # noqa: B027 - optional
        """Called when a long-running clawbot (``clawbot run``) starts: sync, and watch the
        files. A one-shot command never calls it; its searches sync when stale."""

    async def close(self) -> None:  # noqa: B027 - optional
        """Stop watching and close the index; called once when the kernel shuts down."""


SummaryCall = Callable[[str, str], Awaitable[str]]
"""``await summarize(system, prompt)``: the model's text for one call without tools, made on
the session's model chain (auth profiles, retries, fallbacks) and recorded nowhere; raises
:class:`ProviderError` when the model cannot answer."""

#: why a compaction runs: the next request would not fit (``threshold``), the provider said
#: the context overflowed (``overflow``), or the user typed ``/compact`` (``manual``)
CompactionReason = Literal["threshold", "overflow", "manual"]


@attrs.frozen
class CompactionRequest:
    """What a strategy gets: the history since the last compaction and how to shrink it.

    ``messages`` holds no summary message: the previous compaction's summary (if any) is
    ``previous_summary``, for the new summary to carry forward what it still says.
    """

    messages: tuple[Message, ...]
    model: str
    instructions: str | None = None  # ``/compact focus on decisions``: what the summary must keep
    keep_recent_tokens: int = 20_000
    context_window: int = 200_000
    reason: CompactionReason = "overflow"
    previous_summary: str | None = None
    #: the model, for strategies that summarise (``None``: no model can be asked)
    summarize: SummaryCall | None = attrs.field(default=None, eq=False, repr=False)


@attrs.frozen
class CompactionResult:
    """``messages[first_kept_index:]`` stay verbatim; ``summary`` stands for the rest.

    ``method`` says who wrote the summary: ``summary`` a model, ``trim`` a deterministic
    trim that asked no model (chosen, or the fallback when the model failed: ``detail``
    says why). The kernel never stores an empty summary.
    """

    summary: str
    first_kept_index: int
    tokens_before: int
    tokens_after: int
    method: Literal["summary", "trim"] = "summary"
    detail: str = ""


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
    "context_overflow": "Context overflow: this conversation is too long for the model's context window, and clawbot "
    "could not shrink it enough. Send /compact (followed by what the summary must keep) or /new to start afresh; "
    "for a local model with a small window, set agents.defaults.context_tokens to its real size.",
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
