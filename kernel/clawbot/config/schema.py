"""The core configuration: attrs classes mirroring ``clawbot.toml``.

Every key here is documented, with its default, in the repository's root ``clawbot.toml``
(a test keeps the two in step). Tables that plugins own (``[plugins.<name>]``,
``[channels.<name>]``, ``[providers.<name>]``) are validated by the classes the plugins
declare through ``clawbot_config_schema`` and land in :attr:`ClawbotConfig.sections`.
"""

from collections.abc import Mapping
from typing import Any, List, Literal  # noqa: UP035 - cattrs structures typing.List in the config classes

import attrs

from clawbot.config.automation_schema import AgentHeartbeatConfig, HeartbeatConfig, SubagentsConfig
from clawbot.config.context_schema import AgentCompactionConfig, CompactionConfig, ContextPruningConfig
from clawbot.config.gateway_schema import BindingConfig, GatewayConfig
from clawbot.types import ToolProfile
from clawbot.types.context import InRange, OutOfRange

ThinkingLevel = Literal["off", "minimal", "low", "medium", "high", "xhigh"]
LogLevel = Literal["debug", "info", "warning", "error"]

#: the smallest context window an agent can work in (the kernel refuses a model with less)
MIN_CONTEXT_TOKENS = 16_000

PLUGIN_ROOTS = ("plugins", "channels", "providers")
"""Top-level tables whose sub-tables belong to plugins."""


@attrs.frozen(kw_only=True)
class PluginsConfig:
    allow: list[str] = attrs.field(factory=list)
    deny: list[str] = attrs.field(factory=list)


def ref_problem(ref: str) -> str | None:
    """Why ``ref`` is not a ``<provider>/<model>`` reference (``None`` when it is one)."""
    provider, sep, model = ref.partition("/")
    if sep and provider.strip() and model.strip():
        return None
    if not sep and ref.strip():
        return f'"{ref}" has no provider prefix: write "<provider>/{ref}"'
    return f'"{ref}" must be written "<provider>/<model>", e.g. "anthropic/claude-opus-4-5"'


@attrs.frozen
class ModelRefs:
    """The validator of model references: one string, a list, or a table of them."""

    checks_raw_value = True

    def __call__(self, instance: object, attribute: "attrs.Attribute[Any]", value: Any) -> None:
        if isinstance(value, str):
            items: list[tuple[Any, Any]] = [((), value)] if value else []
        elif isinstance(value, list):
            items = [((index,), ref) for index, ref in enumerate(value)]
        elif isinstance(value, Mapping):
            items = [((name,), ref) for name, ref in value.items()]
        else:
            return  # the type check reports it
        for key, ref in items:
            problem = ref_problem(ref) if isinstance(ref, str) else None
            if problem:
                raise OutOfRange((attribute.name, *key), problem)


@attrs.frozen(kw_only=True)
class ModelConfig:
    """``model = "provider/model"`` is short for ``model = { primary = "provider/model" }``."""

    __config_shorthand__ = "primary"

    primary: str = attrs.field(default="", validator=ModelRefs())
    fallbacks: list[str] = attrs.field(factory=list, validator=ModelRefs())


@attrs.frozen(kw_only=True)
class AgentDefaults:
    workspace: str = "~/clawbot"
    model: ModelConfig = attrs.field(factory=ModelConfig)
    thinking: ThinkingLevel = "off"
    timezone: str = ""
    max_iterations: int = attrs.field(default=40, validator=InRange(1, 1000))
    prompt_mode: Literal["auto", "full", "minimal", "none"] = "auto"
    bootstrap_max_chars: int = attrs.field(default=20_000, validator=InRange(100, 10_000_000))
    bootstrap_total_max_chars: int = attrs.field(default=60_000, validator=InRange(100, 10_000_000))
    model_aliases: Mapping[str, str] = attrs.field(factory=dict, validator=ModelRefs())
    owner_ids: List[str] = attrs.field(factory=list)  # noqa: UP006
    # the context window the agents may fill (0: each model's own); smaller wins
    context_tokens: int = attrs.field(default=0, validator=InRange(0, 100_000_000))
    compaction: CompactionConfig = attrs.field(factory=CompactionConfig)
    context_pruning: ContextPruningConfig = attrs.field(factory=ContextPruningConfig)
    heartbeat: HeartbeatConfig = attrs.field(factory=HeartbeatConfig)
    subagents: SubagentsConfig = attrs.field(factory=SubagentsConfig)

    def __attrs_post_init__(self) -> None:
        # A smaller window would fail every message with a context overflow.
        if 0 < self.context_tokens < MIN_CONTEXT_TOKENS:
            raise OutOfRange("context_tokens", f"must be 0 (each model's own window) or at least {MIN_CONTEXT_TOKENS:,}, got {self.context_tokens:,}")


@attrs.frozen(kw_only=True)
class ToolPolicyConfig:
    profile: ToolProfile = "full"
    allow: List[str] = attrs.field(factory=list)  # noqa: UP006
    deny: List[str] = attrs.field(factory=list)  # noqa: UP006
    agent_to_agent: List[str] = attrs.field(factory=list)  # noqa: UP006


@attrs.frozen(kw_only=True)
class AgentToolPolicyConfig:
    """An agent's own policy: what it sets overrides ``[tools]``, what it leaves out inherits."""

    profile: ToolProfile | None = None
    allow: List[str] | None = None  # noqa: UP006
    deny: List[str] = attrs.field(factory=list)  # noqa: UP006


@attrs.frozen(kw_only=True)
class AgentSkillsConfig:
    """An agent's own skill filter; unset ``allow`` inherits ``[skills].allow``."""

    allow: List[str] | None = None  # noqa: UP006


@attrs.frozen(kw_only=True)
class SkillsConfig:
    extra_dirs: List[str] = attrs.field(factory=list)  # noqa: UP006
    allow: List[str] = attrs.field(factory=list)  # noqa: UP006
    deny: List[str] = attrs.field(factory=list)  # noqa: UP006
    # The skills catalogue in the system prompt: at most this many characters in all, and
    # each description cut to this many (planted skills must not make every turn overflow).
    prompt_max_chars: int = attrs.field(default=30_000, validator=InRange(1000, 10_000_000))
    prompt_description_max_chars: int = attrs.field(default=500, validator=InRange(50, 100_000))


@attrs.frozen(kw_only=True)
class AgentConfig:
    id: str
    name: str = ""
    default: bool = False
    workspace: str = ""
    model: ModelConfig | None = None
    tools: AgentToolPolicyConfig | None = None
    skills: AgentSkillsConfig | None = None
    compaction: AgentCompactionConfig | None = None
    heartbeat: AgentHeartbeatConfig | None = None


def _default_agents() -> "list[AgentConfig]":
    return [AgentConfig(id="main", default=True)]


@attrs.frozen(kw_only=True)
class AgentsConfig:
    defaults: AgentDefaults = attrs.field(factory=AgentDefaults)
    # typing.List: the builtin name is shadowed by this very field inside the class body.
    list: List[AgentConfig] = attrs.field(factory=_default_agents)  # noqa: UP006


@attrs.frozen(kw_only=True)
class AuthProfileConfig:
    provider: str
    id: str
    api_key: str = attrs.field(repr=False)


@attrs.frozen(kw_only=True)
class AuthConfig:
    profiles: List[AuthProfileConfig] = attrs.field(factory=list)  # noqa: UP006


@attrs.frozen(kw_only=True)
class ModelPrice:
    """US dollars per million tokens of one model."""

    model: str
    # a price above this is a typo (dollars per token instead of per million, or cents)
    input: float = attrs.field(validator=InRange(0, 10_000))
    output: float = attrs.field(validator=InRange(0, 10_000))
    cache_read: float = attrs.field(default=0.0, validator=InRange(0, 10_000))
    cache_write: float = attrs.field(default=0.0, validator=InRange(0, 10_000))


@attrs.frozen(kw_only=True)
class UsageConfig:
    prices: List[ModelPrice] = attrs.field(factory=list)  # noqa: UP006


@attrs.frozen(kw_only=True)
class SessionResetConfig:
    """When a session ends by itself and the next message starts a fresh one (the old
    transcript is kept): ``daily`` at ``at_hour`` (the user's timezone), ``idle`` after
    ``idle_minutes`` without a message, ``off`` never."""

    mode: Literal["off", "daily", "idle"] = "off"
    at_hour: int = attrs.field(default=4, validator=InRange(0, 23))
    idle_minutes: int = attrs.field(default=0, validator=InRange(0, 525_600))

    def __attrs_post_init__(self) -> None:
        if self.mode == "idle" and self.idle_minutes < 1:
            raise OutOfRange("idle_minutes", 'must be at least 1 when mode = "idle"')


@attrs.frozen(kw_only=True)
class SessionConfig:
    dm_scope: Literal["main", "per-peer", "per-channel-peer", "per-account-channel-peer"] = "main"
    # Under dm_scope "main", whether people other than the owner (approved by pairing, in
    # allow_from, anyone under dm_policy "open") write into the owner's main session too,
    # with its MEMORY.md and exec output; by default each gets a session of their own.
    non_owners_share_main: bool = False
    reset: SessionResetConfig = attrs.field(factory=SessionResetConfig)


@attrs.frozen(kw_only=True)
class MemoryConfig:
    # Which installed memory provider is the agents' long-term memory; empty: the only one
    # installed (several installed and none named is a startup error).
    provider: str = ""


@attrs.frozen(kw_only=True)
class LoggingConfig:
    level: LogLevel = "warning"
    # the log files under <state>/logs rotate at this size, keeping this many old ones
    file_max_bytes: int = attrs.field(default=5_000_000, validator=InRange(1_000, 1_000_000_000))
    file_backups: int = attrs.field(default=5, validator=InRange(1, 100))


@attrs.frozen(kw_only=True)
class CoreConfig:
    """The part of ``clawbot.toml`` the kernel itself validates."""

    plugins: PluginsConfig = attrs.field(factory=PluginsConfig)
    agents: AgentsConfig = attrs.field(factory=AgentsConfig)
    tools: ToolPolicyConfig = attrs.field(factory=ToolPolicyConfig)
    skills: SkillsConfig = attrs.field(factory=SkillsConfig)
    auth: AuthConfig = attrs.field(factory=AuthConfig)
    usage: UsageConfig = attrs.field(factory=UsageConfig)
    session: SessionConfig = attrs.field(factory=SessionConfig)
    memory: MemoryConfig = attrs.field(factory=MemoryConfig)
    logging: LoggingConfig = attrs.field(factory=LoggingConfig)
    gateway: GatewayConfig = attrs.field(factory=GatewayConfig)
    bindings: List[BindingConfig] = attrs.field(factory=list)  # noqa: UP006


@attrs.frozen(kw_only=True)
class ClawbotConfig:
    """The validated configuration: the core tables plus every plugin-owned table.

    ``sections`` maps a table path (``channels.terminal``) to the object its plugin's class
    produced (``None`` when the table is absent and the class has required keys);
    ``owners`` maps the same paths to the plugin that claimed them; ``source`` is the file it came from (``None`` for the built-in defaults).
    """

    core: CoreConfig = attrs.field(factory=CoreConfig)
    sections: Mapping[str, Any] = attrs.field(factory=dict)
    owners: Mapping[str, str] = attrs.field(factory=dict)
    source: str | None = None
    #: top-level tables no loaded plugin read (``[cron]`` while the automation plugin is blocked)
    unread: frozenset[str] = frozenset()

    @property
    def plugins(self) -> PluginsConfig:
        return self.core.plugins

    @property
    def agents(self) -> AgentsConfig:
        return self.core.agents

    @property
    def tools(self) -> ToolPolicyConfig:
        return self.core.tools

    @property
    def skills(self) -> SkillsConfig:
        return self.core.skills

    @property
    def auth(self) -> AuthConfig:
        return self.core.auth

    @property
    def usage(self) -> UsageConfig:
        return self.core.usage

    def price_of(self, model_ref: str) -> ModelPrice | None:
        return next((p for p in self.usage.prices if p.model == model_ref), None)

    @property
    def session(self) -> SessionConfig:
        return self.core.session

    @property
    def memory(self) -> MemoryConfig:
        return self.core.memory

    @property
    def logging(self) -> LoggingConfig:
        return self.core.logging

    @property
    def gateway(self) -> GatewayConfig:
        return self.core.gateway

    @property
    def bindings(self) -> list[BindingConfig]:
        return self.core.bindings

    def section(self, path: str) -> Any:
        return self.sections.get(path)

    def agent_ids(self) -> list[str]:
        return [a.id for a in self.agents.list]

    def agent(self, agent_id: str) -> AgentConfig | None:
        return next((a for a in self.agents.list if a.id == agent_id), None)

    def agent_workspace(self, agent_id: str) -> str:
        """The agent's own workspace, else ``agents.defaults.workspace``."""
        agent = self.agent(agent_id)
        return agent.workspace if agent is not None and agent.workspace else self.agents.defaults.workspace

    def default_agent_id(self) -> str:
        for agent in self.agents.list:
            if agent.default:
                return agent.id
        return self.agents.list[0].id if self.agents.list else "main"
