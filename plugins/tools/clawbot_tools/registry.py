"""Every tool group of this plugin; each group module exposes ``tools(settings)``."""

from __future__ import annotations

import importlib

from clawbot import Tool

from clawbot_tools.config import ToolsSettings

GROUP_MODULES = ("clawbot_tools.fs", "clawbot_tools.web", "clawbot_tools.sessions", "clawbot_tools.messaging")


def all_tools(settings: ToolsSettings) -> list[Tool]:
    found: list[Tool] = []
    for name in GROUP_MODULES:
        found.extend(importlib.import_module(name).tools(settings))
    return found
