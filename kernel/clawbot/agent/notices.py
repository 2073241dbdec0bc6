"""Text on its way to a chat: clawbot's own notices versus what the model or a tool said.

Everything the kernel hands a channel passes :func:`outgoing_text`: control and format
characters become ``\\uXXXX`` (an escape sequence in a reply cannot erase or redraw what a
terminal shows), and, unless the kernel itself wrote the text, the notice mark channels put
in front of clawbot's notices (``OutboundMessage.NOTICE_MARK``) is broken up, so a reply
cannot pass for a notice. A notice quotes untrusted pieces (the command awaiting approval,
the lines a model wrote into SOUL.md) through :func:`quoted`, which does the same to them.
"""

from __future__ import annotations

from clawbot.safetext import defuse, visible
from clawbot.types import OutboundMessage

MARKS = (OutboundMessage.NOTICE_MARK,)


def quoted(text: str) -> str:
    """An untrusted piece of text as a notice may show it."""
    return defuse(visible(text), MARKS)


def outgoing_text(text: str, *, notice: bool) -> str:
    """``text`` as a channel receives it: a notice is clawbot's own, anything else is not."""
    return visible(text) if notice else quoted(text)
