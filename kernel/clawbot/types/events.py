"""Payloads of the notification hooks and chat commands."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import attrs

from clawbot.types.channels import InboundMessage
from clawbot.types.messages import Message
from clawbot.types.settings import PluginStates, Settings


@attrs.frozen
class SessionEvent:
    agent_id: str
    session_key: str
    session_id: str
    reason: str = ""


@attrs.frozen
class CompactionEvent:
    agent_id: str
    session_key: str
    session_id: str
    tokens_before: int
    tokens_after: int | None = None
    summary: str | None = None


@attrs.frozen
class CompactionNearEvent:
    """A turn's next request passed the line before compaction
    (``agents.defaults.compaction.memory_flush.soft_threshold_tokens`` below it): a
    compaction may soon summarise this history away. What a plugin needs to act first, beside
    the turn: nothing it asks or runs here joins the history or reaches the chat."""

    agent_id: str
    session_key: str
    session_id: str
    #: the kernel's estimate of the next request, and the line it passed
    tokens: int
    threshold: int
    #: the turn's history as the next request would carry it (a copy: the turn goes on from its own)
    messages: tuple[Message, ...]
    #: whether everything in that history is the owner's word: an owner's turn, not in a
    #: group's session, no message or event of anyone else's, no summary of a part someone
    #: else wrote in (notes drawn from it are safe to feed the owner's later turns)
    owner_only: bool
    #: today's date where the user lives (``agents.defaults.timezone``), ``YYYY-MM-DD``
    today: str
    #: one model call on the turn's model, profile and tools, recorded nowhere:
    #: ``ask(history, note)``, ``note`` after the system prompt's cache boundary
    ask: Callable[[list[Message], str], Awaitable[Message]] = attrs.field(repr=False)
    #: runs ``reply``'s tool calls with the turn's tools and rights, appending each result to ``history``
    run_tools: Callable[[Message, list[Message]], Awaitable[None]] = attrs.field(repr=False)
    #: whether the session's transcript holds a ``custom`` entry of ``kind`` after its last
    #: compaction (loading starts there, so each compaction cycle starts without one)
    recorded_this_cycle: Callable[[str], bool] = attrs.field(repr=False)
    #: appends a ``custom`` entry ``kind`` with the given fields to the session's transcript
    record: Callable[..., None] = attrs.field(repr=False)
    clawbot: Settings = attrs.field(factory=Settings, repr=False)


@attrs.frozen
class GatewayEvent:
    """The gateway started or stopped with these channels; ``clawbot`` is the read-only
    settings view, ``state`` the calling plugin's own dict for this kernel."""

    channels: tuple[str, ...]
    clawbot: Settings = attrs.field(factory=Settings, repr=False)
    state: dict[str, Any] = attrs.field(factory=dict, repr=False, eq=False)
    #: the kernel's per-plugin states; the kernel gives each plugin its own ``state`` from it
    plugin_states: PluginStates | None = attrs.field(default=None, repr=False, eq=False)

    def for_plugin(self, plugin: str) -> GatewayEvent:
        """This event as plugin ``plugin`` receives it: with its own ``state``."""
        if self.plugin_states is None:
            return self
        return attrs.evolve(self, state=self.plugin_states.of(plugin))


@attrs.frozen
class ChatCommandContext:
    """What a slash command handler receives: its argument text and where it came from.
    ``owner``: the sender is the owner (a command may keep parts of itself to them)."""

    args: str
    message: InboundMessage
    agent_id: str
    session_key: str
    kernel: Any = None
    owner: bool = False


ChatCommandHandler = Callable[[ChatCommandContext], "Awaitable[str | None] | str | None"]


@attrs.frozen
class ChatCommand:
    """A slash command, e.g. ``/status``; ``name`` is given without the slash."""

    name: str
    description: str
    handler: ChatCommandHandler = attrs.field(repr=False)
    accepts_args: bool = True
