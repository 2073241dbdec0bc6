"""How sub-agents are shown: the line of a task, what a parent's model reads when one ends."""

from __future__ import annotations

from clawbot import OutboundMessage
from clawbot.safetext import defuse, visible

TASK_SHOWN = 120  # characters of a task that /subagents and announcements show


def one_line(text: str, limit: int = TASK_SHOWN) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "\u2026"


def quoted_line(text: str) -> str:
    """An untrusted piece shown on one line of clawbot's own reply: control characters made
    visible, the notice mark broken up, line breaks written as ``\\n``."""
    return defuse(visible(text), (OutboundMessage.NOTICE_MARK,)).replace("\n", "\\n")
