"""Shared by the memory tools: argument checks, text made safe to show, the JSON answer.

Memory is the user's own notes, but the agent writes them too, often from what a chat or a web
page said. So every text a provider hands back is shown the way other tools show text they do
not control: invisible and control characters written as ``\\uXXXX`` and the kernel's own
marker phrases broken up. The answer is JSON, so no text inside can end its field and forge
another result, score or path.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from clawbot import ToolResult

GROUP = "memory"


class ArgumentProblem(ValueError):
    """An argument the model sent is unusable; ``str(exc)`` says which and what fits."""


def text_arg(arguments: Mapping[str, Any], name: str) -> str:
    value = arguments.get(name)
    if not isinstance(value, str) or not value.strip():
        raise ArgumentProblem(f"{name} must be a non-empty string")
    return value.strip()


def int_arg(arguments: Mapping[str, Any], name: str, *, minimum: int, maximum: int) -> int | None:
    """The integer ``name`` (``None`` when left out), at least ``minimum``, capped at ``maximum``."""
    value = arguments.get(name)
    if value is None:
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if not isinstance(value, int) or isinstance(value, bool):
        raise ArgumentProblem(f"{name} must be a whole number, not {json.dumps(value)[:40]}")
    if value < minimum:
        raise ArgumentProblem(f"{name} must be at least {minimum}")
    return min(value, maximum)


def score_arg(arguments: Mapping[str, Any], name: str) -> float | None:
    value = arguments.get(name)
    if value is None:
        return None
    if not isinstance(value, int | float) or isinstance(value, bool) or not 0 <= value <= 1:
        raise ArgumentProblem(f"{name} must be a number from 0 to 1, not {json.dumps(value)[:40]}")
    return float(value)


def shown(text: str) -> str:
    """A provider's text as the model gets it (see the module docstring)."""
    from clawbot.promptkit import TRUSTED_MARKERS
    from clawbot.safetext import defuse, visible

    return defuse(visible(text.replace("\r\n", "\n")), TRUSTED_MARKERS)


def answer(payload: Mapping[str, Any], **details: Any) -> ToolResult:
    return ToolResult.text(json.dumps(payload, ensure_ascii=False, indent=1), **details)
