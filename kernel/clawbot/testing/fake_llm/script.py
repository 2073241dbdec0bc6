"""Provider-neutral scripted replies, faults and recorded requests, and script-file loading."""

from __future__ import annotations

import json
import secrets
import string
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, Literal

import attrs

from clawbot.tokens import estimate_tokens

Api = Literal["anthropic", "openai-chat", "openai-responses", "openai-embeddings"]

STOP_REASONS = ("end_turn", "tool_use", "max_tokens", "stop_sequence", "refusal")

FAULT_KINDS = (
    "rate_limit",
    "server_error",
    "overloaded",
    "auth",
    "billing",
    "context_length",
    "dropped_stream",
    "broken_stream_json",
    "stalled_stream",
    "unknown_model",
    "slow",
)

_ALPHABET = string.ascii_letters + string.digits


def new_id(prefix: str, length: int = 24) -> str:
    """A random id in the style of the providers (``msg_01…``, ``call_…``)."""
    return prefix + "".join(secrets.choice(_ALPHABET) for _ in range(length))


def rough_tokens(value: Any) -> int:
    """About four characters a token, like the providers' rule of thumb; at least 1."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return max(1, estimate_tokens(text))


@attrs.frozen
class ToolCallSpec:
    """One tool call the model asks for.

    ``arguments`` is a dict (sent as JSON) or a raw string sent verbatim, which simulates a
    model producing malformed JSON. ``id`` is generated in each API's style when omitted.
    """

    name: str
    arguments: dict[str, Any] | str = attrs.field(factory=dict)
    id: str | None = None

    @property
    def arguments_json(self) -> str:
        if isinstance(self.arguments, str):
            return self.arguments
        return json.dumps(self.arguments, ensure_ascii=False)

    @property
    def arguments_object(self) -> Any:
        """The arguments as a JSON value; a malformed raw string stays a string."""
        if isinstance(self.arguments, str):
            try:
                return json.loads(self.arguments)
            except (ValueError, RecursionError):  # malformed, or nested past the decoder's limit
                return self.arguments
        return self.arguments


def _tool_calls(value: Iterable[ToolCallSpec | Mapping[str, Any]] | None) -> tuple[ToolCallSpec, ...]:
    return tuple(c if isinstance(c, ToolCallSpec) else ToolCallSpec(**dict(c)) for c in value or ())


@attrs.frozen
class Usage:
    """Token counts. ``input_tokens`` counts the uncached input only (Anthropic's meaning);
    OpenAI's ``prompt_tokens`` / ``input_tokens`` are rendered as input + cache read + cache write.
    ``None`` means "compute from the request / reply size"."""

    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0


@attrs.frozen
class CountedUsage:
    """:class:`Usage` with every count known: what a response reports."""

    input_tokens: int
    output_tokens: int
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0


def _usage(value: Usage | Mapping[str, Any] | None) -> Usage:
    if value is None:
        return Usage()
    if isinstance(value, Usage):
        return value
    data = dict(value)
    # Accept the providers' own spellings too.
    aliases = {
        "cache_read_input_tokens": "cache_read_tokens",
        "cache_creation_input_tokens": "cache_write_tokens",
        "cache_write_input_tokens": "cache_write_tokens",
        "cached_tokens": "cache_read_tokens",
        "prompt_tokens": "input_tokens",
        "completion_tokens": "output_tokens",
    }
    return Usage(**{aliases.get(k, k): v for k, v in data.items()})


@attrs.frozen
class Reply:
    """One scripted model turn, rendered in whichever wire API the request arrives on."""

    text: str = ""
    thinking: str | None = None
    tool_calls: tuple[ToolCallSpec, ...] = attrs.field(factory=tuple, converter=_tool_calls)
    usage: Usage = attrs.field(factory=Usage, converter=_usage)
    stop_reason: str | None = attrs.field(default=None)
    """Neutral stop reason: end_turn, tool_use, max_tokens, stop_sequence or refusal.
    Derived when omitted: tool_use when there are tool calls, else end_turn."""
    model: str | None = None
    """Model name to report; defaults to the requested model."""

    @stop_reason.validator
    def _check_stop(self, _attribute: Any, value: str | None) -> None:
        if value is not None and value not in STOP_REASONS:
            raise ValueError(f"unknown stop_reason {value!r}; expected one of {', '.join(STOP_REASONS)}")

    @property
    def effective_stop_reason(self) -> str:
        if self.stop_reason is not None:
            return self.stop_reason
        return "tool_use" if self.tool_calls else "end_turn"

    def resolved_usage(self, request_body: Any) -> CountedUsage:
        """Usage with the omitted counts filled in from the request and reply sizes."""
        usage = self.usage
        input_tokens = usage.input_tokens
        if input_tokens is None:
            input_tokens = max(1, rough_tokens(request_body) - usage.cache_read_tokens - usage.cache_write_tokens)
        output_tokens = usage.output_tokens
        if output_tokens is None:
            produced = self.text + (self.thinking or "") + "".join(c.name + c.arguments_json for c in self.tool_calls)
            output_tokens = rough_tokens(produced)
        return CountedUsage(input_tokens, output_tokens, usage.cache_read_tokens, usage.cache_write_tokens)


def reply_from(value: Reply | str | Mapping[str, Any]) -> Reply:
    """A :class:`Reply` from a Reply, a plain text or a script-file mapping."""
    if isinstance(value, Reply):
        return value
    if isinstance(value, str):
        return Reply(text=value)
    return Reply(**dict(value))


@attrs.frozen
class Fault:
    """A failure served instead of (``slow``: before) the next scripted reply.

    Options: ``model`` (only requests for this model), ``status`` (override the HTTP status),
    ``retry_after`` (seconds, sent as ``retry-after``; rate_limit defaults to 1),
    ``message`` (override the error message), ``delay`` (``slow``: seconds before answering,
    default 0.2; ``stalled_stream``: seconds of silence mid-stream, default 300),
    ``after_events`` (``dropped_stream`` / ``broken_stream_json`` / ``stalled_stream``: events
    sent before the fault, default 3),
    ``tokens`` / ``limit`` (``context_length``: the numbers in the message).
    """

    kind: str = attrs.field(validator=attrs.validators.in_(FAULT_KINDS))
    times: int = attrs.field(default=1, validator=attrs.validators.ge(1))
    model: str | None = None
    status: int | None = None
    retry_after: float | None = None
    message: str | None = None
    delay: float | None = None
    after_events: int = 3
    tokens: int = 210_000
    limit: int = 200_000

    @property
    def pause(self) -> float:
        """Seconds a ``slow`` or ``stalled_stream`` fault waits."""
        if self.delay is not None:
            return self.delay
        return 300.0 if self.kind == "stalled_stream" else 0.2

    def matches(self, model: str | None) -> bool:
        return self.model is None or self.model == model


def _lower_headers(headers: Mapping[str, str]) -> dict[str, str]:
    return {k.lower(): v for k, v in headers.items()}


@attrs.frozen
class RecordedRequest:
    """One request the fake received."""

    api: Api
    method: str
    path: str
    headers: dict[str, str] = attrs.field(converter=_lower_headers)
    body: Any
    model: str | None = None
    stream: bool = False

    @property
    def messages(self) -> list[Any]:
        """The conversation: ``messages`` (Anthropic, Chat Completions) or ``input`` (Responses)."""
        if not isinstance(self.body, dict):
            return []
        if self.api == "openai-responses":
            value = self.body.get("input", [])
            return [{"role": "user", "content": value}] if isinstance(value, str) else list(value)
        return list(self.body.get("messages", []))

    @property
    def system(self) -> Any:
        """The system prompt: Anthropic ``system``, Responses ``instructions``, or Chat's system messages."""
        if not isinstance(self.body, dict):
            return None
        if self.api == "anthropic":
            return self.body.get("system")
        if self.api == "openai-responses":
            return self.body.get("instructions")
        texts = [m.get("content") for m in self.messages if m.get("role") in ("system", "developer")]
        return texts[0] if len(texts) == 1 else (texts or None)

    @property
    def tools(self) -> list[str]:
        """Names of the tools offered to the model."""
        names = []
        for tool in (self.body or {}).get("tools", []) if isinstance(self.body, dict) else []:
            function = tool.get("function")
            names.append(function.get("name") if isinstance(function, dict) else tool.get("name"))
        return [n for n in names if n]

    @property
    def tool_results(self) -> list[dict[str, Any]]:
        """Tool results sent back, normalized to ``{"id": call id, "content": ...}``."""
        found: list[dict[str, Any]] = []
        for item in self.messages:
            if not isinstance(item, dict):
                continue
            if self.api == "openai-chat" and item.get("role") == "tool":
                found.append({"id": item.get("tool_call_id"), "content": item.get("content")})
            elif self.api == "openai-responses" and item.get("type") == "function_call_output":
                found.append({"id": item.get("call_id"), "content": item.get("output")})
            elif self.api == "anthropic" and isinstance(item.get("content"), list):
                for block in item["content"]:
                    if isinstance(block, dict) and block.get("type") == "tool_result":
                        found.append({"id": block.get("tool_use_id"), "content": block.get("content"), "is_error": block.get("is_error", False)})
        return found


ReplySource = Reply | Callable[[RecordedRequest], Reply]


@attrs.frozen
class Script:
    """The contents of a script file."""

    replies: tuple[Reply, ...] = ()
    faults: tuple[Fault, ...] = ()
    strict: bool = False
    default_text: str = "ok"


def load_script(path: str | Path) -> Script:
    """Read a JSON (``.json``) or TOML (any other suffix) script file; see the package docstring."""
    path = Path(path)
    raw = path.read_text(encoding="utf-8")
    if path.suffix.lower() == ".json":
        data = json.loads(raw)
    else:
        import tomllib

        data = tomllib.loads(raw)
    if not isinstance(data, dict):
        raise ValueError(f"{path}: a script is a table/object with 'replies' and 'faults'")
    unknown = set(data) - {"replies", "faults", "strict", "default_text"}
    if unknown:
        raise ValueError(f"{path}: unknown script keys: {', '.join(sorted(unknown))}")
    try:
        replies = tuple(reply_from(r) for r in data.get("replies", []))
        faults = tuple(Fault(**f) for f in data.get("faults", []))
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{path}: {exc}") from exc
    return Script(
        replies=replies,
        faults=faults,
        strict=bool(data.get("strict", False)),
        default_text=str(data.get("default_text", "ok")),
    )
