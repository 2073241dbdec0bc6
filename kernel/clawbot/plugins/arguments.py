"""What one hook implementation is called with: its declared arguments, each context bound to its plugin.

A context the kernel hands every plugin alike (a prompt context, a gateway event) still
carries the calling plugin's own ``state`` (and, for bootstrap files, its own settings):
each implementation receives a copy made for its plugin, so no plugin sees another's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from clawbot.types import BootstrapContext, GatewayEvent, PromptContext

PER_PLUGIN_CONTEXTS = (BootstrapContext, GatewayEvent, PromptContext)


def hook_arguments(impl: Any, kwargs: Mapping[str, Any]) -> list[Any]:
    """The arguments ``impl`` declares, taken from ``kwargs``, each context as its plugin sees it."""
    plugin = impl.plugin_name
    values = (kwargs[arg] for arg in impl.argnames)
    return [value.for_plugin(plugin) if isinstance(value, PER_PLUGIN_CONTEXTS) else value for value in values]
