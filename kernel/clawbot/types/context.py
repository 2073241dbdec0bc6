"""What registration hooks receive, and how plugins claim configuration tables."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any

import attrs


@attrs.frozen
class ConfigSection:
    """A configuration table a plugin validates with an attrs class, e.g. ``channels.telegram``."""

    path: str
    cls: type


@attrs.frozen
class PluginContext:
    """Handed to each plugin's registration hooks.

    ``settings`` is this plugin's validated ``[plugins.<name>]`` object (``None`` when the
    plugin declares no schema); ``section(path)`` returns any other table it claimed.
    ``on_close(callback)`` registers cleanup (kill child processes, close connections) that
    runs when the kernel shuts down; errors in it are logged, never raised.
    """

    plugin_name: str
    config: Any = attrs.field(repr=False)
    state_dir: Path
    settings: Any = None
    sections: Mapping[str, Any] = attrs.field(factory=dict)
    env: Mapping[str, str] = attrs.field(factory=dict, repr=False)
    on_close: Callable[[Callable[[], Awaitable[None] | None]], None] = attrs.field(
        default=lambda callback: None, repr=False, eq=False
    )

    def section(self, path: str) -> Any:
        try:
            return self.sections[path]
        except KeyError:
            raise KeyError(f"plugin {self.plugin_name!r} did not claim the table [{path}]") from None
