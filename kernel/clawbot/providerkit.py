"""Helpers for LLM provider plugins (HTTP details every vendor SDK shares)."""

from __future__ import annotations

import email.utils
import json
import time
from collections.abc import Callable, Mapping
from typing import Any


def parse_retry_after(headers: Mapping[str, str] | None) -> float | None:
    """Seconds to wait from ``retry-after-ms`` / ``retry-after`` (seconds or an HTTP date)."""
    if not headers:
        return None
    value = headers.get("retry-after-ms")
    if value:
        try:
            return max(0.0, float(value) / 1000.0)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return None if when is None else max(0.0, when.timestamp() - time.time())


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


def parse_tool_arguments(raw: str | None) -> tuple[dict, str | None]:
    """(arguments, raw_arguments) of a model's tool call.

    The raw text is kept only when it is not a JSON object, so the agent loop can answer
    with an error result the model can correct instead of failing.
    """
    if not raw or not raw.strip():
        return {}, None
    try:
        value = json.loads(raw)
    except ValueError:
        return {}, raw
    if not isinstance(value, dict):
        return {}, raw
    return value, None


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
