"""System prompt pieces: sections, bootstrap files and skill sources."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import attrs

from clawbot.types.tools import Tool

PromptMode = Literal["full", "minimal", "none"]
SessionKind = Literal["main", "direct", "group", "subagent", "cron"]
ALL_MODES: frozenset[str] = frozenset({"full", "minimal", "none"})


@attrs.frozen
class PromptSection:
    """One titled piece of the system prompt.

    ``stable`` sections go before the provider cache boundary and must not change between
    turns; ``volatile`` ones go after it. ``modes`` lists the prompt modes that include it.
    """

    key: str
    text: str
    order: int = 500
    modes: frozenset[str] = frozenset({"full"})
    stable: bool = True


@attrs.frozen
class PromptContext:
    """What a prompt-section hook may look at for one run."""

    agent_id: str
    mode: PromptMode
    session_key: str
    workspace: Path
    tools: tuple[Tool, ...] = ()
    channel: str | None = None
    model: str | None = None
    config: Any = attrs.field(default=None, repr=False)


@attrs.frozen
class BootstrapFile:
    """A workspace file injected into the prompt; ``content is None`` means missing."""

    name: str
    path: Path
    content: str | None

    @property
    def missing(self) -> bool:
        return self.content is None


@attrs.frozen
class BootstrapContext:
    """What a bootstrap-files hook may look at for one run."""

    agent_id: str
    workspace: Path
    session_kind: SessionKind = "main"
    config: Any = attrs.field(default=None, repr=False)
    settings: Mapping[str, Any] = attrs.field(factory=dict)


@attrs.frozen
class SkillSource:
    """A directory of skill folders; a higher ``precedence`` wins a name clash."""

    name: str
    path: Path
    precedence: int = 0
