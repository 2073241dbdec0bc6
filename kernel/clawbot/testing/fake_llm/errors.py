"""Error responses in each API's real JSON shape, so the SDKs raise their proper exceptions.

Anthropic: ``{"type": "error", "error": {"type": ..., "message": ...}, "request_id": ...}``
with a ``request-id`` header. OpenAI: ``{"error": {"message", "type", "param", "code"}}``
with an ``x-request-id`` header.
"""

from __future__ import annotations

from typing import Any

import attrs

from clawbot.testing.fake_llm.script import Api, Fault, new_id


@attrs.frozen
class ErrorResponse:
    status: int
    body: dict[str, Any]
    headers: dict[str, str]


# kind -> (status, error type, default message)
_ANTHROPIC = {
    "rate_limit": (
        429,
        "rate_limit_error",
        "This request would exceed the rate limit for your organization of 50 requests per minute. "
        "For details, refer to: https://docs.claude.com/en/api/rate-limits.",
    ),
    "server_error": (500, "api_error", "Internal server error"),
    "overloaded": (529, "overloaded_error", "Overloaded"),
    "auth": (401, "authentication_error", "invalid x-api-key"),
    "billing": (
        402,
        "billing_error",
        "Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits.",
    ),
    "context_length": (400, "invalid_request_error", "prompt is too long: {tokens} tokens > {limit} maximum"),
    "unknown_model": (404, "not_found_error", "model: {model}"),
}

# kind -> (status, error type, code, param, default message)
_OPENAI = {
    "rate_limit": (
        429,
        "tokens",
        "rate_limit_exceeded",
        None,
        "Rate limit reached for {model} in organization org-fake on tokens per min (TPM): "
        "Limit 30000, Used 30000, Requested 1000. Please try again in {retry_after}s.",
    ),
    "server_error": (
        500,
        "server_error",
        None,
        None,
        "The server had an error while processing your request. Sorry about that!",
    ),
    "overloaded": (503, "server_error", None, None, "The server is overloaded or not ready yet."),
    "auth": (
        401,
        "invalid_request_error",
        "invalid_api_key",
        None,
        "Incorrect API key provided: sk-fake. You can find your API key at https://platform.openai.com/account/api-keys.",
    ),
    "unknown_model": (
        404,
        "invalid_request_error",
        "model_not_found",
        None,
        "The model `{model}` does not exist or you do not have access to it.",
    ),
    # OpenAI reports an exhausted balance as 429 insufficient_quota (not 402).
    "billing": (
        429,
        "insufficient_quota",
        "insufficient_quota",
        None,
        "You exceeded your current quota, please check your plan and billing details. For more information "
        "on this error, read the docs: https://platform.openai.com/docs/guides/error-codes/api-errors.",
    ),
}

_OPENAI_CONTEXT = {
    "openai-chat": (
        "messages",
        "This model's maximum context length is {limit} tokens. However, your messages resulted in {tokens} tokens. Please reduce the length of the messages.",
    ),
    "openai-responses": (
        "input",
        "Your input exceeds the context window of this model. Please adjust your input and try again.",
    ),
    "openai-embeddings": (
        "input",
        "This model's maximum context length is {limit} tokens, however you requested {tokens} tokens ({tokens} in your prompt; "
        "0 for the completion). Please reduce your prompt; or completion length.",
    ),
}


def _retry_after(fault: Fault) -> float | None:
    if fault.retry_after is not None:
        return fault.retry_after
    return 1.0 if fault.kind == "rate_limit" else None


def _format_seconds(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def error_response(api: Api, fault: Fault, model: str | None) -> ErrorResponse:
    """The HTTP error ``fault`` produces on ``api``."""
    retry_after = _retry_after(fault)
    fields = {
        "tokens": fault.tokens,
        "limit": fault.limit,
        "model": model or "the model",
        "retry_after": _format_seconds(retry_after) if retry_after is not None else "1",
    }
    headers: dict[str, str] = {}
    if retry_after is not None:
        headers["retry-after"] = _format_seconds(retry_after)
    if api == "anthropic":
        status, error_type, message = _ANTHROPIC[fault.kind]
        request_id = new_id("req_011")
        headers["request-id"] = request_id
        if fault.kind == "rate_limit":
            headers["anthropic-ratelimit-requests-limit"] = "50"
            headers["anthropic-ratelimit-requests-remaining"] = "0"
        body = {
            "type": "error",
            "error": {"type": error_type, "message": fault.message or message.format(**fields)},
            "request_id": request_id,
        }
        return ErrorResponse(fault.status or status, body, headers)

    headers["x-request-id"] = new_id("req_", 32)
    code: str | None
    param: str | None
    if fault.kind == "context_length":
        param, message = _OPENAI_CONTEXT[api]
        status, error_type, code = 400, "invalid_request_error", "context_length_exceeded"
    else:
        status, error_type, code, param, message = _OPENAI[fault.kind]
    if fault.kind == "rate_limit":
        headers["x-ratelimit-remaining-tokens"] = "0"
        headers["x-ratelimit-reset-tokens"] = f"{fields['retry_after']}s"
    body = {
        "error": {
            "message": fault.message or message.format(**fields),
            "type": error_type,
            "param": param,
            "code": code,
        }
    }
    return ErrorResponse(fault.status or status, body, headers)


def script_exhausted(api: Api, count: int) -> ErrorResponse:
    """HTTP 500 for a ``strict`` fake whose script ran out."""
    message = f"fake LLM script ran out: request {count} has no scripted reply left (strict=True)"
    fault = Fault("server_error", message=message)
    response = error_response(api, fault, None)
    # Never worth retrying: the test should see it at once.
    return attrs.evolve(response, headers={**response.headers, "x-should-retry": "false"})
