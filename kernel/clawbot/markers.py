"""The phrases clawbot marks its own text with, and how untrusted text is kept from wearing them.

A user message carries clawbot's trusted metadata block, its system event and session
message labels, and (with prompt-based tool calling) ``<tool_call>`` tags the model answers
with. Text from outside clawbot (a chat's, a command's, another session's, a compaction
summary) must never pass as any of them, wherever it enters a message: it goes through
:func:`untrusted`. These live below the agent and the sessions because both render such text.
"""

from __future__ import annotations

from clawbot.safetext import defuse
from clawbot.types import TOOL_CALL_TAGS

#: The tags of prompt-based tool calling (``native_tools = false``).
OPEN, CLOSE = TOOL_CALL_TAGS

TRUSTED_MARKERS = (
    "Inbound Context",
    "trusted metadata",
    "System event from clawbot",
    "Message from another clawbot session",
    "[message_id:",
    OPEN,
    CLOSE,
)
"""Phrases that mark text as the kernel's own: its labels, and the tags of prompt-based tool
calling (``native_tools = false``), which a model that repeats what it read would otherwise
run as its own call. Untrusted text never carries them: they are defused wherever a
channel's, a command's or another session's text, or a compaction summary, enters a user
message (and plugins that paste untrusted text into one do the same: ``clawbot.promptkit``)."""


def untrusted(text: str) -> str:
    """``text`` from outside clawbot with the kernel's marker phrases broken up."""
    return defuse(text, TRUSTED_MARKERS)
