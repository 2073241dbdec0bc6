"""Payloads of the notification hooks and chat commands."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import attrs

from clawbot.types.channels import InboundMessage


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
    channels: tuple[str, ...]
    config: Any = attrs.field(default=None, repr=False)


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
