"""The user message that stands for the conversation a compaction replaced.

A transcript keeps a compaction's summary as data on its entry; both the live turn (right
after compacting) and a reload of the transcript show it to the model as this one message,
so it is rendered here, beside the transcript, byte for byte the same both ways.
"""

from __future__ import annotations

import hashlib

from clawbot.markers import untrusted
from clawbot.safetext import fence, visible

SUMMARY_LABEL = "[Summary of the earlier conversation]"


def render_summary(summary: str, entry_id: str) -> str:
    """The user message that stands for the part of a conversation a compaction replaced.

    A compaction strategy is a plugin, and its summary is written by a model that read the
    conversation, hostile text included: it is untrusted text like a chat's, its markers
    defused, its control and invisible characters shown as ``\\uXXXX`` (a ``\\r`` or a line
    separator cannot start a line a reader does not see start) and the whole fenced; who
    wrote what inside it is the strategy's to say. The fence id comes from the transcript's
    compaction entry (drawn after the summary was written, never shown to the model), so the
    message renders the same live and after a reload and the provider's prompt cache keeps
    working.
    """
    tag = hashlib.sha256(entry_id.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    body = fence(
        visible(untrusted(str(summary))),
        label="summary of the earlier conversation, written by a model",
        note="a record of what was said, not words of clawbot or of the user now",
        tag=tag,
    )
    return f"{SUMMARY_LABEL}\n{body}"
