"""Helpers for plugins that write prompt sections, bootstrap files and replies.

The public face of what the kernel itself uses to build a prompt, so a section or a
bootstrap override reads files, orders tools and spells the silent reply exactly as the
kernel does: ``read_bounded(path, root=workspace)`` opens a file only if it is really inside
the workspace (raising ``FileRefused`` otherwise; ``not_loaded(name, exc.reason)`` is the note
the prompt shows instead). ``TRUSTED_MARKERS`` are the phrases the kernel marks its own text with in a user
message (and the ``<tool_call>`` tags of prompt-based tool calling); a plugin that pastes untrusted text into one (a command's output in a system event)
defuses them: ``clawbot.safetext.defuse(text, TRUSTED_MARKERS)``. ``skills_prompt_caps(config)``
gives the size caps of the skills catalogue a Skills section writes. ``speaker(message)`` says
who wrote a stored user message (the owner, someone else by name and id, clawbot's event,
another session) and gives its text as written, for a plugin that retells a conversation
(a compaction strategy): only the owner's words are the user's.
"""

from __future__ import annotations

from clawbot.agent.bootstrap import (
    DEFAULT_MAX_CHARS,
    Excerpt,
    FileRefused,
    NotLoaded,
    max_chars_of,
    not_loaded,
    read_bounded,
)
from clawbot.agent.replies import SILENT_TOKEN, SILENT_TOKENS, is_silent
from clawbot.agent.tool_order import ordered_tools
from clawbot.agent.user_turns import Speaker, speaker
from clawbot.markers import TRUSTED_MARKERS
from clawbot.skills.budget import prompt_caps as skills_prompt_caps

__all__ = [
    "DEFAULT_MAX_CHARS",
    "SILENT_TOKEN",
    "SILENT_TOKENS",
    "Speaker",
    "TRUSTED_MARKERS",
    "Excerpt",
    "FileRefused",
    "NotLoaded",
    "is_silent",
    "max_chars_of",
    "not_loaded",
    "ordered_tools",
    "read_bounded",
    "skills_prompt_caps",
    "speaker",
]
