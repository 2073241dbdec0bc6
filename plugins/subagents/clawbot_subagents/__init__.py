"""clawbot-subagents: a session hands one task to a sub-agent that works in the background.

Other plugins' tools use it as a capability: ``call.services.capability(Subagents)``.
"""

from clawbot_subagents.api import Subagents, SubagentSummary

__all__ = ["SubagentSummary", "Subagents"]
