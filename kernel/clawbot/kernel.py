"""The kernel: configuration + plugin manager + the registries plugins filled.

Built by :func:`bootstrap`; nothing here runs at import time and nothing is global, so
tests and embedders can build as many independent kernels as they like.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any, Protocol

import attrs

from clawbot.auth_profiles import AuthProfiles
from clawbot.boot import Loaded
from clawbot.config import ClawbotConfig, ConfigError, ConfigProblem
from clawbot.config.context_schema import DEFAULT_COMPACTION_STRATEGY
from clawbot.paths import StatePaths
from clawbot.plugin_settings import plugin_settings
from clawbot.plugins import PluginManager
from clawbot.registry import Registry
from clawbot.sessions.store import SessionStore
from clawbot.types import (
    BootstrapContext,
    Capability,
    Channel,
    ChatCommand,
    CompactionStrategy,
    LLMProvider,
    MemoryProvider,
    PluginContext,
    PluginStates,
    Service,
    SessionKind,
    Settings,
    SkillSource,
    Tool,
    ToolCallAdapter,
)

log = logging.getLogger(__name__)


class _Named(Protocol):
    """What every registered item has: the name it is registered and chosen by."""

    @property
    def name(self) -> str: ...


# hook -> (registry attribute, what a contribution must be, label in messages)
REGISTRATION_HOOKS: dict[str, tuple[str, type[_Named], str]] = {
    "clawbot_channels": ("channels", Channel, "channel"),
    "clawbot_llm_providers": ("llm_providers", LLMProvider, "llm provider"),
    "clawbot_tool_call_adapters": ("tool_call_adapters", ToolCallAdapter, "tool call adapter"),
    "clawbot_memory_providers": ("memory_providers", MemoryProvider, "memory provider"),
    "clawbot_compaction_strategies": ("compaction_strategies", CompactionStrategy, "compaction strategy"),
    "clawbot_skill_sources": ("skill_sources", SkillSource, "skill source"),
    "clawbot_tools": ("tools", Tool, "tool"),
    "clawbot_chat_commands": ("chat_commands", ChatCommand, "chat command"),
    "clawbot_services": ("services", Service, "service"),
    # keyed by the kind's dotted name (Capability.name): one provider per kind
    "clawbot_capabilities": ("capabilities", Capability, "capability"),
}


# registry attribute -> the configuration key that chooses one of its items, and how to read it
# (a name the schema gives by default is a preference: when no plugin offers it, the rule for
# an empty name applies, so removing the plugin that ships it is not a startup error)
SELECTIONS: dict[str, tuple[str, Callable[[ClawbotConfig], str], str]] = {
    "memory_providers": ("memory.provider", lambda config: config.memory.provider, ""),
    "compaction_strategies": (
        "agents.defaults.compaction.strategy",
        lambda config: config.agents.defaults.compaction.strategy,
        DEFAULT_COMPACTION_STRATEGY,
    ),
}


class PluginConflictError(Exception):
    """Two plugins offer the same name; the kernel refuses to guess which one is meant."""

    def __init__(self, conflicts: list[str]) -> None:
        self.conflicts = conflicts
        lines = "\n".join(f"  - {c}" for c in conflicts)
        super().__init__(f"plugins conflict:\n{lines}\nBlock one of each pair with plugins.deny in clawbot.toml or CLAWBOT_DISABLE_PLUGINS.")


def _registry(kind: str) -> Any:
    return attrs.field(factory=lambda: Registry(kind))


@attrs.define
class Kernel:
    """Everything a running clawbot needs, built once per process (or per test)."""

    config: ClawbotConfig
    plugins: PluginManager
    paths: StatePaths
    env: Mapping[str, str] = attrs.field(repr=False)
    channels: Registry[Channel] = _registry("channel")
    llm_providers: Registry[LLMProvider] = _registry("llm provider")
    tool_call_adapters: Registry[ToolCallAdapter] = _registry("tool call adapter")
    memory_providers: Registry[MemoryProvider] = _registry("memory provider")
    compaction_strategies: Registry[CompactionStrategy] = _registry("compaction strategy")
    skill_sources: Registry[SkillSource] = _registry("skill source")
    tools: Registry[Tool] = _registry("tool")
    chat_commands: Registry[ChatCommand] = _registry("chat command")
    services: Registry[Service] = _registry("service")
    capabilities: Registry[Capability] = _registry("capability")
    sessions: SessionStore = attrs.field(default=attrs.Factory(lambda self: SessionStore(self.paths.sessions), takes_self=True))
    auth: AuthProfiles = attrs.field(
        default=attrs.Factory(
            lambda self: AuthProfiles(list(self.config.auth.profiles), self.paths.root / "auth-state.json", default_key=self._own_key),
            takes_self=True,
        )
    )

    #: registry attribute -> name of the item in use (``None``: none installed); see :func:`select`
    active: dict[str, str | None] = attrs.field(factory=dict)
    #: what plugins may read of ``config`` (``ctx.clawbot`` in every hook context)
    settings: Settings = attrs.field(default=attrs.Factory(lambda self: plugin_settings(self.config, self.env), takes_self=True))
    #: each plugin's own ``state`` dict, for this kernel only
    plugin_states: PluginStates = attrs.field(default=attrs.Factory(lambda self: PluginStates(_own_settings(self.config)), takes_self=True))

    _closers: list[tuple[str, Callable[[], Awaitable[None] | None]]] = attrs.field(factory=list, repr=False)
    _skill_catalog: Any = attrs.field(default=None, repr=False)
    _memory_open: bool = attrs.field(default=True, repr=False)  # close() is promised once

    def _own_key(self, provider: str) -> str | None:
        """The key provider ``provider`` sends for its ``default`` profile: auth health is kept
        per key, so a key the user changed starts healthy."""
        found = self.llm_providers.get(provider)
        return found.api_key() if found is not None else None

    @property
    def memory_provider(self) -> MemoryProvider | None:
        """The long-term memory chosen by ``memory.provider`` (``None``: none installed)."""
        name = self.active.get("memory_providers")
        return self.memory_providers[name] if name else None

    @property
    def tool_call_adapter(self) -> ToolCallAdapter | None:
        """How models without native tool calling get their tools (``None``: none installed)."""
        return next(iter(self.tool_call_adapters), None)

    @property
    def compaction_strategy(self) -> CompactionStrategy | None:
        """The strategy chosen by ``agents.defaults.compaction.strategy`` (``None``: none installed)."""
        name = self.active.get("compaction_strategies")
        return self.compaction_strategies[name] if name else None

    @property
    def skill_catalog(self) -> Any:
        """The skills of every agent (``clawbot.skills.catalog.SkillCatalog``), built on first
        use and re-reading only what changed on disk."""
        if self._skill_catalog is None:
            from clawbot.skills.catalog import SkillCatalog

            self._skill_catalog = SkillCatalog(self)
        return self._skill_catalog

    async def aclose(self) -> None:
        """Close what plugins opened (SDK clients, connections, child processes).

        Memory providers close first (their watchers and indexes may use what the plugins
        opened), once per kernel; then cleanup registered with ``PluginContext.on_close``
        runs last-registered first. Errors are only logged, so one plugin's failure never
        keeps the others from closing.
        """
        memory, self._memory_open = (list(self.memory_providers) if self._memory_open else []), False
        for memory_provider in memory:
            try:
                await memory_provider.close()
            except Exception:
                log.warning("closing memory provider %s failed", memory_provider.name, exc_info=True)
        for plugin, closer in reversed(self._closers):
            try:
                outcome = closer()
                if inspect.isawaitable(outcome):
                    await outcome
            except Exception:
                log.warning("cleanup of plugin %s failed", plugin, exc_info=True)
        self._closers.clear()
        for provider in self.llm_providers:
            try:
                await provider.aclose()
            except Exception:
                log.warning("closing provider %s failed", provider.name, exc_info=True)

    def plugin_context(self, plugin: str) -> PluginContext:
        owned = {path: self.config.sections.get(path) for path, owner in self.config.owners.items() if owner == plugin}
        return PluginContext(
            plugin_name=plugin,
            state_dir=self.paths.root,
            clawbot=self.settings,
            settings=self.plugin_states.settings_of(plugin),
            sections=owned,
            env=self.env,
            state=self.plugin_states.of(plugin),
            on_close=lambda callback: self._closers.append((plugin, callback)),
        )

    def bootstrap_context(self, agent_id: str, workspace: Path, kind: SessionKind = "main") -> BootstrapContext:
        """What ``clawbot_bootstrap_files`` receives for a session of ``kind`` of ``agent_id``."""
        return BootstrapContext(agent_id, workspace, kind, self.settings, plugin_states=self.plugin_states)


def _own_settings(config: ClawbotConfig) -> dict[str, Any]:
    """Each plugin's validated ``[plugins.<name>]`` object, by plugin name."""
    return {path.removeprefix("plugins."): config.sections.get(path) for path, owner in config.owners.items() if path == f"plugins.{owner}"}


def _tool_problem(tool: Tool) -> str | None:
    """Refuse at boot, by name, a tool whose parameters cannot be a JSON object schema.

    (The full schema check needs jsonschema, ~80 ms to import; it runs at the first call of
    the tool, where a broken schema becomes an error result, never a failed turn.)
    """
    if not isinstance(tool.parameters, Mapping) or tool.parameters.get("type", "object") != "object":
        return f"tool {tool.name!r}: parameters must be a JSON schema of type object"
    return None


def select(registry: Registry[Any], configured: str, key: str, default: str = "") -> tuple[str | None, str | None]:
    """(the name in use, the problem) for a registry the user chooses one item of by ``key``.

    The configured name, else the only item; the kernel never picks by registration order, so
    several items and none named is a problem, as is a name nobody offers (except the
    schema's ``default`` name, which counts as none named when nobody offers it).
    """
    if configured and configured == default and configured not in registry:
        configured = ""
    names = registry.names()
    installed = f"installed: {', '.join(names)}" if names else "none is installed"
    if configured:
        if configured in registry:
            return configured, None
        return None, f"no installed plugin offers the {registry.kind} {configured!r} ({installed})"
    if len(names) > 1:
        kinds = registry.kind[:-1] + "ies" if registry.kind.endswith("y") else registry.kind + "s"
        return None, f"several {kinds} are installed ({', '.join(names)}): name the one to use"
    return (names[0] if names else None), None


async def bootstrap(loaded: Loaded) -> Kernel:
    """Ask every plugin for what it registers; raise :class:`PluginConflictError` on clashes.

    A plugin whose hook raises or returns the wrong kind of object is recorded in
    ``kernel.plugins.failures`` and left out; the others are registered. Then the memory
    provider and the compaction strategy in use are chosen (:data:`SELECTIONS`), and each
    agent's own compaction strategy is checked; a choice that cannot be made raises :class:`~clawbot.config.ConfigError` naming the key.
    """
    kernel = Kernel(loaded.config, loaded.plugins, StatePaths.resolve(loaded.env), loaded.env)
    conflicts: list[str] = []
    for hook, (attribute, expected, label) in REGISTRATION_HOOKS.items():
        registry: Registry[Any] = getattr(kernel, attribute)
        for contribution in await kernel.plugins.collect(hook, lambda name: {"ctx": kernel.plugin_context(name)}):
            item = contribution.value
            if not isinstance(item, expected):
                kernel.plugins.record_failure(contribution.plugin, hook, TypeError(f"expected a {expected.__name__}, got {item!r}"))
                continue
            name = getattr(item, "name", None)
            if not isinstance(name, str) or not name:  # a registry is keyed by name: an unnamed item cannot be found, so it is left out
                unnamed = f"plugin {contribution.plugin!r} offered a {label} with no usable name in {hook} (got {name!r}): it is left out"
                kernel.plugins.record_failure(contribution.plugin, hook, ValueError(unnamed))
                continue
            if isinstance(item, Tool) and (problem := _tool_problem(item)):
                kernel.plugins.record_failure(contribution.plugin, hook, ValueError(problem))
                continue
            registry.add(contribution.plugin, name, item)
        conflicts.extend(registry.conflicts)
    if len(kernel.tool_call_adapters) > 1:  # one model call speaks one convention: the kernel never picks by order
        offered = " and ".join(f"{name!r} by plugin {kernel.tool_call_adapters.plugin_of(name)!r}" for name in kernel.tool_call_adapters.names())
        conflicts.append(f"only one tool call adapter may be installed: {offered}")
    if conflicts:
        raise PluginConflictError(conflicts)
    problems = []
    for attribute, (key, read, default) in SELECTIONS.items():
        kernel.active[attribute], problem = select(getattr(kernel, attribute), read(kernel.config), key, default)
        if problem:
            problems.append(ConfigProblem(key, problem))
    for index, agent in enumerate(kernel.config.agents.list):  # an agent's own strategy: named, so it must exist
        if agent.compaction is not None and agent.compaction.strategy:
            _, problem = select(kernel.compaction_strategies, agent.compaction.strategy, "")
            if problem:
                problems.append(ConfigProblem(f"agents.list[{index}].compaction.strategy", problem))
    if problems:
        raise ConfigError(kernel.config.source or "<defaults>", problems)
    return kernel
