"""clawbot: a plugin-first personal AI agent gateway.

This module is the public face for plugin authors::

    from clawbot import hookimpl, Tool, ToolResult

Only ``hookimpl`` is defined eagerly; the value types load on first access so that
``import clawbot`` (and thus ``clawbot --help``) stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pluggy

__version__ = "0.1.0"

hookimpl = pluggy.HookimplMarker("clawbot")
"""Marker for hook implementations: ``@hookimpl def clawbot_tools(ctx): ...``."""

if TYPE_CHECKING:  # deferred: the types load on first access (__getattr__); type checkers see them here
    from clawbot.types import *  # noqa: F403


def __getattr__(name: str) -> Any:
    # Only capitalised names are value types. Lower-case lookups are submodules that the
    # import system probes for (``from clawbot import hookspecs``): answering those must not
    # import every type.
    if not name[:1].isupper():
        raise AttributeError(f"module 'clawbot' has no attribute {name!r}")
    # deferred: `import clawbot` (plugin discovery, `clawbot --help`) must not load every value type
    import clawbot.types as types

    try:
        value = getattr(types, name)
    except AttributeError:
        raise AttributeError(f"module 'clawbot' has no attribute {name!r}") from None
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    # deferred: as in __getattr__
    import clawbot.types as types

    return sorted(set(globals()) | set(types.__all__))
