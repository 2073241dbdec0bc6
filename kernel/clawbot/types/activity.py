"""What a turn is doing while it runs, for channels that show it live.

A channel that wants it returns an :data:`ActivitySink` from :meth:`Channel.live
<clawbot.types.channels.Channel.live>`; the gateway then hands it the turn's activity as it
happens: the reply's text as the model writes it, each tool call as it starts, and a
failure when the turn ends in one (a sink ignores kinds it does not know). The text
is already safe to show (control characters as ``\\uXXXX``, the notice mark broken up, a
mark split across two deltas too), as everything the gateway hands a channel. The final
reply still arrives through :meth:`Channel.send`, with ``streamed`` set when its text is
exactly what the deltas since the last tool call showed, so the channel does not show it
twice.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import attrs


@attrs.frozen
class TextDelta:
    """More of the reply, as the model writes it. Deltas before a tool call are what the
    model said before calling it; the deltas after the last one are the final reply."""

    text: str


@attrs.frozen
class ToolCallStarted:
    """The agent starts a tool call. ``name`` and ``summary`` (the arguments on one line,
    shortened to about 80 characters) are made visible and inert like any other text."""

    name: str
    summary: str
    call_id: str = ""


@attrs.frozen
class TurnFailed:
    """The turn failed (a provider error, a crash); ``text`` is the short message the chat
    then gets as a notice. For channels that tell a failure apart (the control API exits
    non-zero for it); others may ignore it, the notice still arrives."""

    text: str


Activity = TextDelta | ToolCallStarted | TurnFailed
ActivitySink = Callable[[Activity], Awaitable[None]]
"""Receives a turn's activity, one event at a time, in order; a sink that raises is not
called again for that turn (the final reply still arrives in full)."""
