"""Where ``clawbot onboard`` finds and writes the default model in parsed ``clawbot.toml``:
``[agents.defaults] model = "..."`` (the shorthand) or ``[agents.defaults.model] primary = "..."``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def _model_setting(data: Mapping[str, Any]) -> Any:
    node: Any = data
    for name in ("agents", "defaults", "model"):
        node = node.get(name) if isinstance(node, Mapping) else None
    return node


def default_model(data: Mapping[str, Any]) -> str:
    """``agents.defaults.model`` of parsed TOML, shorthand or table ("" when unset)."""
    model = _model_setting(data)
    if isinstance(model, str):
        return model
    return model.get("primary", "") if isinstance(model, dict) else ""


def model_place(data: Mapping[str, Any]) -> tuple[tuple[str, ...], str]:
    """Where the default model is written: beside a shorthand already there, else the table."""
    if isinstance(_model_setting(data), str):
        return ("agents", "defaults"), "model"
    return ("agents", "defaults", "model"), "primary"
