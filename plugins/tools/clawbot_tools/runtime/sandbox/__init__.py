"""The OS sandbox every command the model runs goes through.

The exec gate's analysis decides when to ask the user; the sandbox decides what a command
can touch. :func:`choose` picks a :class:`Mechanism` for this machine ("bwrap",
"landlock" or "off"), whose :meth:`~Mechanism.prepare` turns a command and a
:class:`SandboxPolicy` into a :class:`Launch` for ``subprocess``/asyncio.
"""

from clawbot_tools.runtime.sandbox.choose import SETTINGS, Choice, choose
from clawbot_tools.runtime.sandbox.policy import Launch, Limits, Mechanism, SandboxError, SandboxPolicy

__all__ = ["SETTINGS", "Choice", "Launch", "Limits", "Mechanism", "SandboxError", "SandboxPolicy", "choose"]
