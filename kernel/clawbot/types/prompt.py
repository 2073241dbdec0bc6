"""System prompt pieces: sections, bootstrap files and skill sources."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import attrs

from clawbot.types.settings import PluginStates, Settings
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
class InjectedFile:
    """A bootstrap file as it goes into the prompt, after the per-file and total caps.

    ``content`` is what is injected (``None``: the file is missing and the prompt says
    ``[MISSING] Expected at: <path>``); ``raw_chars`` is the file's own size.
    """

    name: str
    path: Path
    content: str | None
    raw_chars: int = 0
    truncated: bool = False

    @property
    def missing(self) -> bool:
        return self.content is None


@attrs.frozen
class SkillEntry:
    """One skill: a folder with a ``SKILL.md`` whose frontmatter names and describes it.

    ``source`` says where it was found (``workspace``, ``user``, ``extra``, ``bundled`` or a
    plugin's skill source name); ``eligible`` is false when a required binary, environment
    variable, config flag or OS is missing, and ``reasons`` says which.
    """

    name: str
    description: str
    location: Path
    source: str
    homepage: str = ""
    emoji: str = ""
    user_invocable: bool = True
    disable_model_invocation: bool = False
    always: bool = False
    primary_env: str = ""
    eligible: bool = True
    reasons: tuple[str, ...] = ()


@attrs.frozen
class RuntimeInfo:
    """Facts for the Runtime line: stable for the life of the process."""

    host: str
    os: str
    python: str
    shell: str = ""


@attrs.frozen
class PromptContext:
    """What a prompt-section hook may look at for one run.

    Everything here is fixed for a session (so the sections it produces are too): nothing
    that changes from turn to turn (the clock, message ids, the sender) is in it; those
    reach the model in the user message. ``clawbot`` is the read-only settings view
    (:class:`~clawbot.types.Settings`); ``state`` is the calling plugin's own dict for this
    kernel (see ``PluginContext.state``).
    """

    agent_id: str
    mode: PromptMode
    session_key: str
    workspace: Path
    tools: tuple[Tool, ...] = ()
    channel: str | None = None
    model: str | None = None
    clawbot: Settings = attrs.field(factory=Settings, repr=False)
    session_kind: SessionKind = "main"
    bootstrap_files: tuple[InjectedFile, ...] = ()
    skills: tuple[SkillEntry, ...] = ()
    timezone: str = ""
    thinking: str = "off"
    capabilities: tuple[str, ...] = ()
    runtime: RuntimeInfo | None = None
    reasoning_tags: bool = False
    heartbeat_prompt: str = ""
    """What a heartbeat poll says, when heartbeats run for this agent (empty: they do not)."""
    state: dict[str, Any] = attrs.field(factory=dict, repr=False, eq=False)
    #: the kernel's per-plugin states; the kernel gives each plugin its own ``state`` from it
    plugin_states: PluginStates | None = attrs.field(default=None, repr=False, eq=False)

    def for_plugin(self, plugin: str) -> PromptContext:
        """This context as plugin ``plugin`` receives it: with its own ``state``."""
        if self.plugin_states is None:
            return self
        return attrs.evolve(self, state=self.plugin_states.of(plugin))

    def has_tool(self, name: str) -> bool:
        return any(t.name == name for t in self.tools)


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
    """What a bootstrap-files hook may look at for one run.

    ``clawbot`` is the read-only settings view (:class:`~clawbot.types.Settings`);
    ``settings`` is the calling plugin's validated ``[plugins.<name>]`` object (``None``: it
    has none) and ``state`` its own dict for this kernel (see ``PluginContext.state``).
    """

    agent_id: str
    workspace: Path
    session_kind: SessionKind = "main"
    clawbot: Settings = attrs.field(factory=Settings, repr=False)
    settings: Any = None
    state: dict[str, Any] = attrs.field(factory=dict, repr=False, eq=False)
    #: the kernel's per-plugin states; the kernel gives each plugin its own ``state`` and ``settings``
    plugin_states: PluginStates | None = attrs.field(default=None, repr=False, eq=False)

    def for_plugin(self, plugin: str) -> BootstrapContext:
        """This context as plugin ``plugin`` receives it: with its own ``settings`` and ``state``."""
        if self.plugin_states is None:
            return self
        return attrs.evolve(self, settings=self.plugin_states.settings_of(plugin), state=self.plugin_states.of(plugin))


@attrs.frozen
class SkillSource:
    """A directory of skill folders; a higher ``precedence`` wins a name clash."""

    name: str
    path: Path
    precedence: int = 0
