"""Helpers for LLM provider plugins (HTTP details every vendor SDK shares)."""

from __future__ import annotations

import asyncio
import datetime
import email.utils
import json
import math
import re
import time
import urllib.parse
from collections.abc import AsyncIterable, AsyncIterator, Callable, Mapping
from typing import Any

from clawbot.safetext import LONE_SURROGATE
from clawbot.types import ProviderError

#: Seconds to open a connection to a provider: an address that does not answer is reported
#: quickly instead of after the whole request timeout.
CONNECT_TIMEOUT_S = 5.0
#: Seconds of silence between two events of a streamed answer before it counts as stalled.
#: Providers send keep-alive events; a long silence means the answer will not come.
STREAM_IDLE_TIMEOUT_S = 120.0


def sdk_timeout(request_s: float, connect_s: float = CONNECT_TIMEOUT_S) -> Any:
    """The ``timeout=`` for an SDK client: ``request_s`` overall, ``connect_s`` to connect."""
    # deferred: only a provider building its SDK client needs httpx2; providerkit is imported at plugin discovery
    import httpx2

    return httpx2.Timeout(request_s, connect=min(connect_s, request_s))


def endpoint(base_url: Any) -> str:
    """A base URL as messages and logs may show it: without user, password or query."""
    parts = urllib.parse.urlsplit(str(base_url))
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    netloc = host + (f":{parts.port}" if parts.port else "")
    return urllib.parse.urlunsplit((parts.scheme, netloc, parts.path.rstrip("/"), "", ""))


def located(error: ProviderError, model: str, base_url: Any, *, streaming: bool = False) -> ProviderError:
    """``error`` naming the model asked for and the endpoint called, for messages and logs; a
    connection lost once the answer was streaming is a dropped stream, not an unreachable
    provider. Returns ``error`` itself."""
    error.model = error.model or model
    error.endpoint = error.endpoint or endpoint(base_url)
    if streaming and error.kind == "connection" and error.stream_break is None:
        error.stream_break = "dropped"
    return error


async def stream_events(stream: AsyncIterable[Any], idle_timeout_s: float, provider: str) -> AsyncIterator[Any]:
    """The events of an SDK stream, with the ways a begun answer breaks off made a
    :class:`ProviderError` the kernel retries: no event for ``idle_timeout_s`` seconds
    (``timeout``, stalled) or an event that is not valid JSON (``connection``, garbled).
    A dropped connection surfaces as the SDK's transport error, mapped by the plugin."""
    iterator = aiter(stream)
    while True:
        try:
            async with asyncio.timeout(idle_timeout_s):
                event = await anext(iterator)
        except StopAsyncIteration:
            return
        except TimeoutError:
            detail = f"no stream event for {idle_timeout_s:g} s (stream_idle_timeout_s)"
            raise ProviderError("timeout", detail, provider=provider, stream_break="stalled") from None
        except json.JSONDecodeError as exc:
            detail = f"a stream event was not valid JSON ({exc})"
            raise ProviderError("connection", detail, provider=provider, stream_break="garbled") from exc
        yield event


RETRY_AFTER_MAX_S = 86_400.0
"""The longest wait a server can ask for; a larger (or absurd) number counts as a day."""
_DELAY_SECONDS = re.compile(r"\d+(?:\.\d+)?")


def retry_after_seconds(value: str | None, *, now: float | None = None) -> float | None:
    """Seconds to wait from one ``Retry-After`` value: a number of seconds or an HTTP date.

    ``None`` for anything else (empty, garbage, a negative number), so the caller uses its
    own default. A date in the past is 0; more than :data:`RETRY_AFTER_MAX_S` (however
    large, even past what a float holds) is that. ``now`` (epoch seconds) is for tests.
    """
    text = (value or "").strip()
    if not text:
        return None
    if _DELAY_SECONDS.fullmatch(text):
        return min(RETRY_AFTER_MAX_S, float(text))  # float() of a huge digit string is inf, never an error
    try:
        when = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if when is None:
        return None
    if when.tzinfo is None:  # "-0000" means UTC with no zone said
        when = when.replace(tzinfo=datetime.UTC)
    seconds = when.timestamp() - (time.time() if now is None else now)
    return min(RETRY_AFTER_MAX_S, max(0.0, seconds))


def parse_retry_after(headers: Mapping[str, str] | None) -> float | None:
    """Seconds to wait from ``retry-after-ms`` / ``retry-after`` (seconds or an HTTP date)."""
    if not headers:
        return None
    millis = (headers.get("retry-after-ms") or "").strip()
    if _DELAY_SECONDS.fullmatch(millis):
        return min(RETRY_AFTER_MAX_S, float(millis) / 1000.0)
    return retry_after_seconds(headers.get("retry-after"))


def field(obj: Any, key: str, default: Any = None) -> Any:
    """``obj[key]`` or ``obj.key`` for SDK event objects, also reading pydantic extras."""
    if obj is None:
        return default
    if isinstance(obj, Mapping):
        return obj.get(key, default)
    value = getattr(obj, key, None)
    if value is None:
        extra = getattr(obj, "model_extra", None) or {}
        value = extra.get(key)
    return default if value is None else value


def json_plain(value: Any) -> Any:
    """Mappings (possibly frozen) -> dicts, recursively, so an SDK can serialise them."""
    if isinstance(value, Mapping):
        return {str(k): json_plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_plain(v) for v in value]
    return value


#: How deeply a tool call's arguments may nest (the arguments object itself is level 1).
#: Real tools take a few levels; hundreds of levels only serve to exhaust Python's recursion
#: in whatever walks them next (JSON decoding, schema checks, copies, the transcript).
MAX_ARGUMENT_DEPTH = 64
#: How :func:`tool_arguments_problem` describes such arguments ("The arguments for x ...").
TOO_DEEP = f"were nested deeper than {MAX_ARGUMENT_DEPTH} levels: flatten them"

#: A JSON string, escapes included, for scanning JSON text without decoding it. An
#: unterminated string runs to the end of the text, so a match that started never fails
#: (no backtracking on hostile text).
JSON_STRING_PATTERN = r'"[^"\\]*(?:\\.[^"\\]*)*(?:"|\\?\Z)'
_STRING_OR_BRACKET = re.compile(JSON_STRING_PATTERN + r"|[\[\]{}]", re.DOTALL)


def text_too_deep(text: str, limit: int = MAX_ARGUMENT_DEPTH) -> bool:
    """Whether the JSON ``text`` nests deeper than ``limit``, found without decoding it.

    One linear scan, brackets inside strings ignored; also works on malformed text.
    """
    if text.count("[") + text.count("{") <= limit:
        return False
    depth = 0
    for match in _STRING_OR_BRACKET.finditer(text):
        token = match.group()
        if token in "[{":
            depth += 1
            if depth > limit:
                return True
        elif token in "]}":
            depth = max(0, depth - 1)
    return False


#: How :func:`tool_arguments_problem` describes a number JSON cannot carry (NaN, Infinity, 1e999).
NOT_FINITE = "held a number JSON cannot carry (NaN or Infinity): write a finite number or null"
#: ... and a string holding half of a UTF-16 surrogate pair (``"\\ud800"`` alone).
NOT_TEXT = "held a string that is not valid Unicode (a lone surrogate escape such as \\ud800): write the character itself"


def value_problem(value: Any, limit: int = MAX_ARGUMENT_DEPTH) -> str | None:
    """Why decoded arguments cannot be used or sent again, ``None`` if they can: nesting deeper
    than ``limit``, a non-finite number, a lone surrogate in a string or a key. No recursion."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, str):
            if LONE_SURROGATE.search(item):
                return NOT_TEXT
        elif isinstance(item, float):
            if not math.isfinite(item):
                return NOT_FINITE
        elif isinstance(item, Mapping | list | tuple):
            if depth > limit:
                return TOO_DEEP
            if isinstance(item, Mapping):
                stack.extend((str(key), depth) for key in item)
                stack.extend((child, depth + 1) for child in item.values())
            else:
                stack.extend((child, depth + 1) for child in item)
    return None


class NotFiniteNumber(ValueError):
    """JSON text held NaN, Infinity or a number too large for a float."""


def _refuse_constant(name: str) -> float:
    raise NotFiniteNumber(f"{name} is not a JSON number")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise NotFiniteNumber(f"{text[:40]} is too large for a number")
    return value


def strict_json(text: str) -> Any:
    """``json.loads`` as JSON itself defines it: NaN, Infinity and numbers that overflow to
    infinity are errors (Python accepts them, and every SDK then refuses to send them back)."""
    return json.loads(text, parse_constant=_refuse_constant, parse_float=_finite_float)


_JSON_NAMES = {list: "array", str: "string", int: "number", float: "number", bool: "boolean", type(None): "null"}


def tool_arguments_problem(raw: str) -> str | None:
    """Why a model's raw argument text cannot be used, ``None`` if it can.

    The words continue "The arguments for <tool> ...", so the model learns what to change.
    """
    if text_too_deep(raw):
        return TOO_DEEP
    try:
        value = strict_json(raw)
    except NotFiniteNumber:
        return NOT_FINITE
    except ValueError as exc:
        return f"were not valid JSON ({exc})"
    if not isinstance(value, dict):
        return f"were a JSON {_JSON_NAMES.get(type(value), type(value).__name__)}, not an object"
    return value_problem(value)


def parse_tool_arguments(raw: str | None) -> tuple[dict, str | None]:
    """(arguments, raw_arguments) of a model's tool call.

    The raw text is kept, and the arguments left empty, when it is not a JSON object, nests
    deeper than :data:`MAX_ARGUMENT_DEPTH` (checked before decoding), holds a number JSON
    cannot carry (NaN, Infinity) or a lone surrogate, so the agent loop can answer with an
    error result the model can correct instead of failing, now or in a later request.
    """
    if not raw or not raw.strip():
        return {}, None
    if text_too_deep(raw):
        return {}, raw
    try:
        value = strict_json(raw)
    except ValueError:
        return {}, raw
    if not isinstance(value, dict) or value_problem(value) is not None:
        return {}, raw
    return value, None


def decoded_tool_arguments(value: Any) -> tuple[dict, str | None]:
    """:func:`parse_tool_arguments` for arguments an SDK already decoded.

    Arguments that are not an object, nest too deep, hold a non-finite number or a lone
    surrogate are kept as text (written without recursion) for the loop to answer with an error.
    """
    if value is None:
        return {}, None
    if isinstance(value, Mapping) and value_problem(value) is None:
        return dict(value), None
    return {}, _dumps_without_recursion(value)


def _dumps_without_recursion(value: Any) -> str:
    """Compact JSON text of ``value`` however deep it nests (``json.dumps`` recurses)."""
    out: list[str] = []
    # Work items: ("value", v) to encode, ("text", s) to emit as is; popped from the end.
    stack: list[tuple[str, Any]] = [("value", value)]
    while stack:
        kind, item = stack.pop()
        if kind == "text":
            out.append(item)
        elif isinstance(item, Mapping):
            pieces: list[tuple[str, Any]] = [("text", "{")]
            for index, (key, child) in enumerate(item.items()):
                pieces.append(("text", ("," if index else "") + json.dumps(str(key), ensure_ascii=False) + ":"))
                pieces.append(("value", child))
            pieces.append(("text", "}"))
            stack.extend(reversed(pieces))
        elif isinstance(item, list | tuple):
            pieces = [("text", "[")]
            for index, child in enumerate(item):
                if index:
                    pieces.append(("text", ","))
                pieces.append(("value", child))
            pieces.append(("text", "]"))
            stack.extend(reversed(pieces))
        else:
            out.append(json.dumps(item, ensure_ascii=False, default=str))
    return "".join(out)


class ClientsByKey:
    """One SDK client per API key (the kernel rotates auth profiles), made on first use."""

    def __init__(self) -> None:
        self._clients: dict[str, Any] = {}

    def get(self, key: str, make: Callable[[], Any]) -> Any:
        client = self._clients.get(key)
        if client is None:
            client = self._clients[key] = make()
        return client

    async def aclose(self) -> None:
        clients, self._clients = list(self._clients.values()), {}
        for client in clients:
            await client.close()
