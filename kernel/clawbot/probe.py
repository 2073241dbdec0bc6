"""One tiny real request to a model: does this provider, key and model answer?

``clawbot onboard`` sends it before storing a key, ``clawbot doctor --live`` to check the
configured model. It costs a few tokens: a short system prompt, "ping", at most 16 tokens back.
"""

from __future__ import annotations

from typing import Any

import attrs

from clawbot.types import Message, ModelRequest, ProviderError, SystemPrompt

PROBE_PROMPT = "Reply with OK."


@attrs.frozen
class ProbeFailure:
    """Why the model did not answer: ``kind`` as in ``ProviderError`` ("auth", "connection" ...,
    "" for anything else) and the one-line message for the user."""

    kind: str
    message: str


async def probe(provider: Any, model: str, api_key: str | None = None) -> ProbeFailure | None:
    """``None`` when ``provider`` answered for ``model``; else why not.

    ``api_key``: send this key instead of the provider's own (a key not stored yet).
    """
    request = ModelRequest(model, SystemPrompt(PROBE_PROMPT), (Message.user("ping"),), max_output_tokens=16)
    if api_key:
        request = attrs.evolve(request, api_key=api_key)
    try:
        await provider.complete(request)
    except ProviderError as exc:
        return ProbeFailure(exc.kind, exc.user_message)
    except Exception as exc:  # a short message, never a stack trace
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        return ProbeFailure("", f"{type(exc).__name__}: {first}" if first else type(exc).__name__)
    return None
