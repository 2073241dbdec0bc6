"""The settings a plugin may read, and the state a plugin may keep, per running kernel.

:class:`Settings` is a typed, read-only view of the parts of ``clawbot.toml`` that plugins
outside the kernel need (the agents and their workspaces, the owner, the prompt's size
caps ...). The kernel builds it once from its own configuration, whose schema stays
internal, and hands the same view to every hook context as ``ctx.clawbot``. Every class
here is frozen and its collections immutable, so a plugin cannot change what another one
(or the kernel) reads.

:class:`PluginStates` holds each plugin's own mutable ``state`` dict; the kernel keeps one
per kernel, so two kernels in one process (two tests, an embedder) never share a plugin's
channel, cache or counters. A plugin reads its dict as ``ctx.state`` in every hook.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

import attrs

#: ``agents.defaults.bootstrap_max_chars`` when nothing sets it: a workspace file longer
#: than this is cut in the prompt.
DEFAULT_BOOTSTRAP_MAX_CHARS = 20_000
#: ``skills.prompt_max_chars`` when nothing sets it: the skills catalogue's share of the prompt.
DEFAULT_SKILLS_PROMPT_MAX_CHARS = 30_000
#: ``skills.prompt_description_max_chars`` when nothing sets it: one skill's description.
DEFAULT_SKILLS_DESCRIPTION_MAX_CHARS = 500
#: ``agents.defaults.heartbeat.prompt`` when nothing sets it: what a heartbeat turn says.
DEFAULT_HEARTBEAT_PROMPT = (
    "Read HEARTBEAT.md if it exists (workspace context). Follow it strictly. Do not infer or repeat old tasks "
    "from prior chats. If nothing needs attention, reply HEARTBEAT_OK."
)


def _frozen_mapping(value: Mapping[str, str]) -> Mapping[str, str]:
    return MappingProxyType(dict(value))


def _strings(value: Iterable[str]) -> tuple[str, ...]:
    return tuple(value)


@attrs.frozen
class HeartbeatSettings:
    """An agent's heartbeat (``agents.defaults.heartbeat``, with the agent's own
    ``every_minutes`` and ``model`` from ``agents.list[].heartbeat`` over them): a periodic
    turn in its main session that works through HEARTBEAT.md."""

    #: minutes between heartbeats (0: off)
    every_minutes: int = 30
    #: a model for heartbeats, ``provider/model`` or an alias (``""``: the agent's own)
    model: str = ""
    #: what the heartbeat turn says
    prompt: str = DEFAULT_HEARTBEAT_PROMPT
    #: heartbeats run only from ``active_from`` until ``active_until`` ("HH:MM" on the user's
    #: clock; both empty, or equal: all day; ``active_until`` before ``active_from`` spans midnight)
    active_from: str = ""
    active_until: str = ""
    #: a reply that is ``HEARTBEAT_OK`` with at most this many characters of other text is not delivered
    ack_max_chars: int = 300
    #: where a reply that is delivered goes: ``"last"`` (the chat the main session last heard from) or ``"none"``
    target: str = "last"


@attrs.frozen
class AgentSettings:
    """One configured agent (``[[agents.list]]``), with what it inherits already applied."""

    #: the id sessions and bindings name it by, e.g. ``"main"``
    id: str
    #: its display name (``""``: none set)
    name: str = ""
    #: its workspace folder: its own ``workspace`` or ``agents.defaults.workspace``, with
    #: ``~`` expanded against the kernel's environment (``HOME``)
    workspace: Path = Path()
    #: its primary model as ``provider/model`` (``""``: the provider's own default)
    model: str = ""
    #: whether it answers what no binding routes elsewhere (exactly one agent does)
    default: bool = False
    #: its heartbeat, the defaults' with its own cadence and model applied
    heartbeat: HeartbeatSettings = HeartbeatSettings()


@attrs.frozen
class SubagentLimits:
    """``agents.defaults.subagents``: how many sub-agents run at once (all agents), how deep
    they may nest (1: a sub-agent starts none) and the longest one may run."""

    max_concurrent: int = 8
    max_depth: int = 1
    timeout_s: int = 600


@attrs.frozen
class MemoryFlushSettings:
    """``agents.defaults.compaction.memory_flush``: the silent turn that stores durable notes
    before a compaction summarises them away (``prompt``'s ``YYYY-MM-DD`` is today's date;
    ``system_prompt`` goes after the system prompt's cache boundary for that turn only)."""

    enabled: bool = True
    soft_threshold_tokens: int = 4_000
    system_prompt: str = "The session is close to compaction. Store durable memories now."
    prompt: str = (
        "Write lasting notes (decisions, facts, preferences, open questions) to memory/YYYY-MM-DD.md "
        "with today's date; if there is nothing to store, reply with NO_REPLY."
    )


@attrs.frozen
class Settings:
    """What a plugin may read of clawbot's configuration (``ctx.clawbot``): read-only.

    A plugin's own table stays ``PluginContext.settings``; this view is the rest of the
    configuration, limited to what plugins need. Built by the kernel; a test builds one
    directly, e.g. ``Settings(agents=(AgentSettings("main", workspace=tmp, default=True),))``.
    """

    #: every configured agent, in configuration order
    agents: tuple[AgentSettings, ...] = ()
    #: the agent that answers what no binding routes elsewhere
    default_agent_id: str = "main"
    #: ``agents.defaults.workspace``, ``~`` expanded: the folder of an agent without its own
    default_workspace: Path = Path()
    #: the user's IANA time zone (``agents.defaults.timezone``; ``""``: the host's)
    timezone: str = ""
    #: who the assistant works for (``agents.defaults.owner_ids``): sender ids, phone numbers
    owner_ids: tuple[str, ...] = attrs.field(default=(), converter=_strings)
    #: short model names the user may use (``agents.defaults.model_aliases``): alias -> ``provider/model``
    model_aliases: Mapping[str, str] = attrs.field(factory=dict, converter=_frozen_mapping, hash=False)
    #: whether the agent's tools run in a sandbox; clawbot has no setting that turns one on yet
    sandbox_enabled: bool = False
    #: the most characters of one workspace file the prompt shows (``agents.defaults.bootstrap_max_chars``)
    bootstrap_max_chars: int = DEFAULT_BOOTSTRAP_MAX_CHARS
    #: the most characters the skills catalogue may take in the prompt (``skills.prompt_max_chars``)
    skills_prompt_max_chars: int = DEFAULT_SKILLS_PROMPT_MAX_CHARS
    #: the most characters of one skill's description in it (``skills.prompt_description_max_chars``)
    skills_prompt_description_max_chars: int = DEFAULT_SKILLS_DESCRIPTION_MAX_CHARS
    #: the limits on sub-agents (``agents.defaults.subagents``)
    subagents: SubagentLimits = SubagentLimits()
    #: the memory flush before a compaction (``agents.defaults.compaction.memory_flush``)
    memory_flush: MemoryFlushSettings = MemoryFlushSettings()
    #: the configuration file in use (``None``: the defaults, no file)
    config_file: Path | None = None
    #: where ``clawbot run`` serves the control API (``gateway.bind``, ``gateway.port``; port 0: any free one)
    gateway_bind: str = "127.0.0.1"
    gateway_port: int = 18789
    #: whether ``clawbot run`` serves the control API at all (``gateway.control_api``)
    gateway_control_api: bool = True
    #: the heartbeat of an agent no ``[[agents.list]]`` entry names (``agents.defaults.heartbeat``)
    heartbeat: HeartbeatSettings = HeartbeatSettings()
    #: the agents whose tools may act on each other's sessions and jobs (``tools.agent_to_agent``; ``"*"``: all)
    agent_to_agent: tuple[str, ...] = attrs.field(default=(), converter=_strings)

    def agent_ids(self) -> list[str]:
        return [agent.id for agent in self.agents]

    def agent(self, agent_id: str) -> AgentSettings:
        """The agent ``agent_id``; ``KeyError`` naming the configured ones if there is none."""
        for agent in self.agents:
            if agent.id == agent_id:
                return agent
        raise KeyError(f"no agent {agent_id!r} is configured (agents: {', '.join(self.agent_ids()) or 'none'})")

    def workspace_of(self, agent_id: str) -> Path:
        """The workspace folder of agent ``agent_id``, ``~`` expanded; ``default_workspace``
        for an id no ``[[agents.list]]`` entry names."""
        return next((agent.workspace for agent in self.agents if agent.id == agent_id), self.default_workspace)

    def heartbeat_of(self, agent_id: str) -> HeartbeatSettings:
        """The heartbeat of agent ``agent_id``; :attr:`heartbeat` for an id no
        ``[[agents.list]]`` entry names."""
        return next((agent.heartbeat for agent in self.agents if agent.id == agent_id), self.heartbeat)


class PluginStates:
    """Each plugin's own mutable state, for one kernel (``ctx.state`` is the plugin's dict).

    The kernel makes one per kernel and hands each plugin its own dict in every hook it
    calls; nothing else lives longer than the kernel, so a plugin needs no module globals.
    It also knows each plugin's validated ``[plugins.<name>]`` object, which a context
    shared by all plugins (:class:`~clawbot.types.BootstrapContext`) shows each as ``settings``.
    """

    def __init__(self, own_settings: Mapping[str, Any] | None = None) -> None:
        self._states: dict[str, dict[str, Any]] = {}
        self._own_settings = dict(own_settings or {})

    def of(self, plugin: str) -> dict[str, Any]:
        """Plugin ``plugin``'s dict, created empty on first use."""
        return self._states.setdefault(plugin, {})

    def settings_of(self, plugin: str) -> Any:
        """Plugin ``plugin``'s validated ``[plugins.<name>]`` object (``None``: it has none)."""
        return self._own_settings.get(plugin)

    def __repr__(self) -> str:
        return f"PluginStates({sorted(self._states)})"
