"""Plugin discovery, isolation and hook calling.

The names load on first use: ``clawbot.plugins.tracing`` (read by every command at start,
``clawbot agent`` through a gateway included) must not import the plugin manager with it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # deferred: the names load on first use (above); type checkers see them here
    from clawbot.plugins.discovery import DISABLE_ENV, ENTRY_POINT_GROUP, BlockRules
    from clawbot.plugins.manager import PluginManager, create_plugin_manager
    from clawbot.plugins.records import Contribution, HookFailure, PluginRecord

_HOMES = {
    "DISABLE_ENV": "discovery",
    "ENTRY_POINT_GROUP": "discovery",
    "BlockRules": "discovery",
    "PluginManager": "manager",
    "create_plugin_manager": "manager",
    "Contribution": "records",
    "HookFailure": "records",
    "PluginRecord": "records",
}

__all__ = [
    "DISABLE_ENV",
    "ENTRY_POINT_GROUP",
    "BlockRules",
    "Contribution",
    "HookFailure",
    "PluginManager",
    "PluginRecord",
    "create_plugin_manager",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'clawbot.plugins' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"clawbot.plugins.{home}"), name)
    globals()[name] = value
    return value
