"""What registration hooks receive, and how plugins claim configuration tables."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any

import attrs

from clawbot.types.settings import Settings


@attrs.frozen
class ConfigSection:
    """A configuration table a plugin validates with an attrs class, e.g. ``channels.telegram``."""

    path: str
    cls: type


#: Field metadata marking a configuration key whose paths (a string or a list of strings) an
#: agent may write, e.g. a sandbox's write grants:
#: ``attrs.field(factory=list, metadata={AGENT_WRITABLE: True})``. clawbot never reads its
#: configuration from such a folder (the agent could rewrite its own limits there).
AGENT_WRITABLE = "clawbot.agent_writable"


class OutOfRange(ValueError):
    """A configuration number outside its range; ``config_key`` names the key it belongs to,
    so the problem is reported at ``<table>.<key>`` rather than at the table."""

    def __init__(self, config_key: str | tuple[str | int, ...], message: str) -> None:
        super().__init__(message)
        self.config_key = config_key


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(value)


@attrs.frozen
class InRange:
    """The attrs validator of every number in a configuration table: ``lo <= value <= hi``.

    ``timeout_s: float = attrs.field(default=600.0, validator=InRange(0.01, 86_400))``.
    Every numeric key gets one (a test walks all schemas), so a negative or absurd value is
    reported by key instead of failing later, far from the file.
    """

    lo: float
    hi: float
    #: safe on the raw value from the file: the converter runs it on every key of a table
    checks_raw_value = True

    def __call__(self, instance: object, attribute: attrs.Attribute, value: float) -> None:
        if not isinstance(value, int | float) or isinstance(value, bool):
            return  # the type check reports it
        if not self.lo <= value <= self.hi:
            raise OutOfRange(attribute.name, f"must be between {_number(self.lo)} and {_number(self.hi)}, got {_number(value)}")


@attrs.frozen
class PluginContext:
    """Handed to each plugin's registration hooks.

    ``settings`` is this plugin's validated ``[plugins.<name>]`` object (``None`` when the
    plugin declares no schema); ``section(path)`` returns any other table it claimed.
    ``clawbot`` is the read-only view of the rest of the configuration a plugin may read
    (:class:`~clawbot.types.Settings`: agents, workspaces, owner ...). ``state`` is this
    plugin's own mutable dict for this kernel: the same dict in every hook the plugin gets
    (``PromptContext.state``, ``BootstrapContext.state``, ``GatewayEvent.state``), never
    shared with another kernel in the process, so a plugin keeps per-kernel objects (a
    channel its web routes also serve) there instead of in module globals.
    ``on_close(callback)`` registers cleanup (kill child processes, close connections) that
    runs when the kernel shuts down; errors in it are logged, never raised.
    """

    plugin_name: str
    state_dir: Path
    clawbot: Settings = attrs.field(factory=Settings, repr=False)
    settings: Any = None
    sections: Mapping[str, Any] = attrs.field(factory=dict)
    env: Mapping[str, str] = attrs.field(factory=dict, repr=False)
    state: dict[str, Any] = attrs.field(factory=dict, repr=False, eq=False)
    on_close: Callable[[Callable[[], Awaitable[None] | None]], None] = attrs.field(default=lambda callback: None, repr=False, eq=False)

    def section(self, path: str) -> Any:
        try:
            return self.sections[path]
        except KeyError:
            raise KeyError(f"plugin {self.plugin_name!r} did not claim the table [{path}]") from None
