"""Anthropic SDK exceptions -> :class:`~clawbot.types.ProviderError`.

The SDK is imported inside :func:`to_provider_error` only, so importing this module stays
cheap. Errors raised inside a stream (an SSE ``error`` event) arrive as ``APIStatusError``
with the stream's HTTP status (200): they are classified by the error ``type`` instead.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from clawbot.providerkit import parse_retry_after
from clawbot.types import ProviderError, ProviderErrorKind

PROVIDER = "anthropic"

_CONTEXT = re.compile(
    r"prompt is too long|context.{0,20}(length|window|limit)|too many (input )?tokens|maximum context|"
    r"exceeds? the (model'?s? )?(context|maximum)|input length",
    re.IGNORECASE,
)
_BILLING = re.compile(
    r"credit balance|billing|insufficient.{0,10}(credit|fund|quota)|payment|purchase credits|spend limit",
    re.IGNORECASE,
)
_THINKING = re.compile(r"thinking", re.IGNORECASE)

_TYPES: dict[str, ProviderErrorKind] = {
    "rate_limit_error": "rate_limit",
    "authentication_error": "auth",
    "permission_error": "auth",
    "billing_error": "billing",
    "overloaded_error": "overloaded",
    "api_error": "server",
    "timeout_error": "timeout",
    "request_too_large": "context_overflow",
}


# Messages out of order (e.g. a tool result without its call, two user turns where the API
# wants alternation): "role ordering" for the user, not a generic bad request.
_ROLE_ORDER = re.compile(
    r"(roles must alternate|must be a response to a preceding message|tool_use_id|tool_call_id|"
    r"unexpected role|messages: .*(first|final) message|ids were found without|without `?tool_result`? blocks?)",
    re.IGNORECASE,
)


def classify(status: int | None, error_type: str | None, message: str) -> ProviderErrorKind:
    """The error kind from an HTTP status, the API's ``error.type`` and its message text."""
    status = status if status and status >= 400 else None  # 200: an error event inside a stream
    if status == 402 or error_type == "billing_error" or (_BILLING.search(message) and status in (None, 400, 403)):
        return "billing"
    if status == 429 or error_type == "rate_limit_error":
        return "rate_limit"
    if status in (401, 403) or error_type in ("authentication_error", "permission_error"):
        return "auth"
    if status in (529, 503) or error_type == "overloaded_error":
        return "overloaded"
    if status == 413 or _CONTEXT.search(message):
        return "context_overflow"
    if status in (408, 504) or error_type == "timeout_error":
        return "timeout"
    if status is not None and status >= 500:
        return "server"
    if status == 404 or error_type == "not_found_error":
        return "unknown_model"  # the Messages API answers an unknown model id with 404
    if status in (400, 422) or error_type == "invalid_request_error":
        if _THINKING.search(message):
            return "thinking_unsupported"
        return "role_ordering" if _ROLE_ORDER.search(message) else "invalid_request"
    if error_type in _TYPES:
        return _TYPES[error_type]
    # an unknown error inside an accepted stream: the server failed mid-answer
    return "server" if status is None else "invalid_request"


def _error_fields(body: Any) -> tuple[str | None, str]:
    if isinstance(body, Mapping):
        error = body.get("error", body)
        if isinstance(error, Mapping):
            return error.get("type"), str(error.get("message") or "")
    return None, str(body or "")


def to_provider_error(exc: BaseException, provider: str = PROVIDER) -> ProviderError | None:
    """The :class:`ProviderError` for an SDK or transport exception; ``None`` for anything else."""
    if isinstance(exc, ProviderError):
        return exc
    import anthropic
    import httpx2

    if isinstance(exc, anthropic.APITimeoutError):
        return ProviderError("timeout", "request timed out", provider=provider)
    if isinstance(exc, anthropic.APIConnectionError):
        cause = exc.__cause__
        detail = f"{exc.message}" + (f" ({type(cause).__name__}: {cause})" if cause else "")
        return ProviderError("connection", detail, provider=provider)
    if isinstance(exc, anthropic.APIStatusError):
        error_type, message = _error_fields(exc.body)
        error_type = error_type or getattr(exc, "type", None)
        message = message or getattr(exc, "api_message", None) or exc.message
        kind = classify(exc.status_code, error_type, message)
        status = exc.status_code if exc.status_code >= 400 else None
        retry_after = parse_retry_after(exc.response.headers) if kind in ("rate_limit", "overloaded", "server") else None
        return ProviderError(kind, message, status=status, retry_after=retry_after, provider=provider)
    if isinstance(exc, anthropic.APIResponseValidationError):
        return ProviderError("server", exc.message, status=exc.status_code, provider=provider)
    if isinstance(exc, httpx2.TimeoutException):
        return ProviderError("timeout", f"{type(exc).__name__}: {exc}", provider=provider)
    if isinstance(exc, httpx2.TransportError):
        # the SDK does not wrap errors raised while a stream is read: a dropped connection
        detail = f"stream interrupted ({type(exc).__name__}: {exc})"
        return ProviderError("connection", detail, provider=provider, stream_break="dropped")
    if isinstance(exc, anthropic.APIError):
        error_type, message = _error_fields(exc.body)
        return ProviderError(classify(None, error_type, message or exc.message), message or exc.message, provider=provider)
    return None


__all__ = ["classify", "parse_retry_after", "to_provider_error"]
