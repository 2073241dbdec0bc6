"""clawbot-subagents: a session hands one task to a sub-agent that works in the background.

Other plugins' tools use it as a capability: ``call.services.capability(Subagents)``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # type checkers see the names here; at run time they load on first access
    from clawbot_subagents.api import Subagents, SubagentSummary

__all__ = ["SubagentSummary", "Subagents"]


def __getattr__(name: str) -> Any:
    # Plugin discovery imports this package for its entry point (clawbot_subagents.plugin):
    # the capability's types load only when another plugin asks for them.
    if name not in __all__:
        raise AttributeError(f"module 'clawbot_subagents' has no attribute {name!r}")
    from clawbot_subagents import api

    return getattr(api, name)
