"""Plugin discovery, isolation and hook calling."""

from clawbot.plugins.discovery import DISABLE_ENV, ENTRY_POINT_GROUP, BlockRules
from clawbot.plugins.manager import PluginManager, create_plugin_manager
from clawbot.plugins.records import Contribution, HookFailure, PluginRecord

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
