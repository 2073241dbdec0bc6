"""Every tool group of this plugin; each group module exposes ``tools(settings)``."""

from __future__ import annotations

import importlib
from typing import Any

from clawbot import Tool

from clawbot_tools.config import ToolsSettings

GROUP_MODULES = (
    "clawbot_tools.fs",
    "clawbot_tools.web",
    "clawbot_tools.sessions",
    "clawbot_tools.memory",
    "clawbot_tools.messaging",
    "clawbot_tools.runtime",
)


def all_tools(settings: ToolsSettings, ctx: Any = None) -> list[Tool]:
    """``ctx`` (the PluginContext) goes to groups that declare ``NEEDS_CONTEXT``."""
    found: list[Tool] = []
    for name in GROUP_MODULES:
        module = importlib.import_module(name)
        if getattr(module, "NEEDS_CONTEXT", False):
            found.extend(module.tools(settings, ctx))
        else:
            found.extend(module.tools(settings))
    return found
