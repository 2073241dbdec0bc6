"""OpenAI SDK exceptions (and failed Responses streams) -> :class:`~clawbot.types.ProviderError`.

The SDK is imported inside :func:`to_provider_error` only. An error the server reports
inside an accepted stream (Chat Completions ``{"error": ...}`` data, a Responses ``error``
or ``response.failed`` event) has no HTTP status: it is classified by code and text.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from clawbot.providerkit import parse_retry_after
from clawbot.types import ProviderError, ProviderErrorKind

_CONTEXT = re.compile(
    r"context_length_exceeded|context.{0,20}(length|window|limit)|maximum context|too many tokens|"
    r"prompt is too long|exceeds? the (model'?s? )?(context|maximum)|input (is )?too long|string_above_max_length",
    re.IGNORECASE,
)
_BILLING = re.compile(
    r"insufficient_quota|exceeded your current quota|billing|credit balance|payment|insufficient.{0,10}(credit|fund)",
    re.IGNORECASE,
)
_REASONING = re.compile(r"reasoning|thinking", re.IGNORECASE)
_RATE = re.compile(r"rate.?limit", re.IGNORECASE)
_OVERLOADED = re.compile(r"overloaded|server_is_overloaded|capacity|slow_down", re.IGNORECASE)


# Messages out of order (e.g. a tool result without its call, two user turns where the API
# wants alternation): "role ordering" for the user, not a generic bad request.
_ROLE_ORDER = re.compile(
    r"(roles must alternate|must be a response to a preceding message|tool_use_id|tool_call_id|"
    r"unexpected role|messages: .*(first|final) message|ids were found without|without `?tool_result`? blocks?)",
    re.IGNORECASE,
)


def classify(status: int | None, code: str | None, message: str) -> ProviderErrorKind:
    """The error kind from an HTTP status (``None`` inside a stream), error code/type and text."""
    status = status if status and status >= 400 else None
    text = f"{code or ''} {message}"
    if status == 402 or _BILLING.search(text):
        return "billing"
    if status == 429 or _RATE.search(code or ""):
        return "rate_limit"
    if status in (401, 403) or (code or "") in ("invalid_api_key", "authentication_error", "permission_error"):
        return "auth"
    if status in (503, 529) or _OVERLOADED.search(text):
        return "overloaded"
    if status == 413 or _CONTEXT.search(text):
        return "context_overflow"
    if status in (408, 504) or (code or "") in ("timeout", "timeout_error"):
        return "timeout"
    if status is not None and status >= 500:
        return "server"
    if status == 404 or (code or "") == "model_not_found":
        return "unknown_model"  # OpenAI and Ollama answer an unknown model with 404
    if status in (400, 422):
        if status == 400 and _REASONING.search(message):
            return "thinking_unsupported"
        if status == 400 and _ROLE_ORDER.search(message):
            return "role_ordering"
        return "invalid_request"
    if status is None:
        if _RATE.search(text):
            return "rate_limit"
        return "server"  # the server failed while answering
    return "invalid_request"


def _fields(body: Any) -> tuple[str | None, str]:
    """(code or type, message) of an error body: ``{"error": {...}}`` or the inner dict."""
    if isinstance(body, Mapping):
        error = body.get("error", body)
        if isinstance(error, Mapping):
            code = error.get("code") or error.get("type")
            return (str(code) if code else None), str(error.get("message") or "")
        if isinstance(error, str):
            return None, error
    return None, str(body or "") if body is not None else ""


def from_payload(code: str | None, message: str, provider: str) -> ProviderError:
    """A failed stream (Responses ``error`` / ``response.failed`` event)."""
    return ProviderError(classify(None, code, message), message, provider=provider)


def to_provider_error(exc: BaseException, provider: str = "openai") -> ProviderError | None:
    """The :class:`ProviderError` for an SDK or transport exception; ``None`` for anything else."""
    if isinstance(exc, ProviderError):
        return exc
    import httpx2
    import openai

    if isinstance(exc, openai.APITimeoutError):
        return ProviderError("timeout", "request timed out", provider=provider)
    if isinstance(exc, openai.APIConnectionError):
        cause = exc.__cause__
        detail = exc.message + (f" ({type(cause).__name__}: {cause})" if cause else "")
        return ProviderError("connection", detail, provider=provider)
    if isinstance(exc, openai.APIStatusError):
        code, message = _fields(exc.body)
        message = message or exc.message
        kind = classify(exc.status_code, code, message)
        retry_after = parse_retry_after(exc.response.headers) if kind in ("rate_limit", "overloaded", "server") else None
        status = exc.status_code if exc.status_code >= 400 else None
        return ProviderError(kind, message, status=status, retry_after=retry_after, provider=provider)
    if isinstance(exc, openai.APIResponseValidationError):
        return ProviderError("server", exc.message, status=exc.status_code, provider=provider)
    if isinstance(exc, openai.APIError):  # an error object inside the stream
        code, message = _fields(exc.body)
        return from_payload(code, message or exc.message, provider)
    if isinstance(exc, httpx2.TimeoutException):
        return ProviderError("timeout", f"{type(exc).__name__}: {exc}", provider=provider)
    if isinstance(exc, httpx2.TransportError):
        # the SDK does not wrap errors raised while a stream is read: a dropped connection
        detail = f"stream interrupted ({type(exc).__name__}: {exc})"
        return ProviderError("connection", detail, provider=provider, stream_break="dropped")
    return None


__all__ = ["classify", "from_payload", "parse_retry_after", "to_provider_error"]
