"""Payloads of the notification hooks and chat commands."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import attrs

from clawbot.types.channels import InboundMessage
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
    """What a slash command handler receives: its argument text and where it came from."""

    args: str
    message: InboundMessage
    agent_id: str
    session_key: str
    kernel: Any = None


ChatCommandHandler = Callable[[ChatCommandContext], "Awaitable[str | None] | str | None"]


@attrs.frozen
class ChatCommand:
    """A slash command, e.g. ``/status``; ``name`` is given without the slash."""

    name: str
    description: str
    handler: ChatCommandHandler = attrs.field(repr=False)
    accepts_args: bool = True
