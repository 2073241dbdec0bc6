"""What one hook implementation is called with: its declared arguments, each context bound to its plugin.

A context the kernel hands every plugin alike (a prompt context, a gateway event) still
carries the calling plugin's own ``state`` (and, for bootstrap files, its own settings):
each implementation receives a copy made for its plugin, so no plugin sees another's.

Those contexts (:class:`~clawbot.types.PromptContext`, :class:`~clawbot.types.BootstrapContext`,
:class:`~clawbot.types.GatewayEvent`) are known by their ``for_plugin`` method rather than by
class: every hook call passes through here, ``clawbot --help``'s ``clawbot_commands`` too, and
that must not load the value types.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def hook_arguments(impl: Any, kwargs: Mapping[str, Any]) -> list[Any]:
    """The arguments ``impl`` declares, taken from ``kwargs``, each context as its plugin sees it."""
    plugin = impl.plugin_name
    values = (kwargs[arg] for arg in impl.argnames)
    return [_as_seen_by(plugin, value) for value in values]


def _as_seen_by(plugin: str, value: Any) -> Any:
    bind = getattr(type(value), "for_plugin", None)
    return value if bind is None else bind(value, plugin)
