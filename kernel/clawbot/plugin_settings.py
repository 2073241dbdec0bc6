"""The :class:`~clawbot.types.Settings` view plugins read, built from the kernel's configuration.

The one place that maps ``ClawbotConfig`` (internal, free to change) onto the public view:
a plugin that needs another setting gets a field here and in ``clawbot.types.settings``.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from clawbot.config import ClawbotConfig
from clawbot.config.automation_schema import AgentHeartbeatConfig, HeartbeatConfig
from clawbot.paths import expand_user_path
from clawbot.types import AgentSettings, HeartbeatSettings, MemoryFlushSettings, Settings, SubagentLimits


def plugin_settings(config: ClawbotConfig, env: Mapping[str, str]) -> Settings:
    """What plugins may read of ``config``; ``~`` in workspaces expands against ``env``."""
    defaults = config.agents.defaults
    flush = defaults.compaction.memory_flush
    default_id = config.default_agent_id()
    agents = tuple(
        AgentSettings(
            id=agent.id,
            name=agent.name,
            workspace=expand_user_path(config.agent_workspace(agent.id), env),
            model=(agent.model or defaults.model).primary,
            default=agent.id == default_id,
            heartbeat=_heartbeat(defaults.heartbeat, agent.heartbeat),
        )
        for agent in config.agents.list
    )
    return Settings(
        agents=agents,
        default_agent_id=default_id,
        default_workspace=expand_user_path(defaults.workspace, env),
        timezone=defaults.timezone,
        owner_ids=defaults.owner_ids,
        model_aliases=defaults.model_aliases,
        bootstrap_max_chars=defaults.bootstrap_max_chars,
        skills_prompt_max_chars=config.skills.prompt_max_chars,
        skills_prompt_description_max_chars=config.skills.prompt_description_max_chars,
        subagents=SubagentLimits(defaults.subagents.max_concurrent, defaults.subagents.max_depth, defaults.subagents.timeout_s),
        memory_flush=MemoryFlushSettings(flush.enabled, flush.soft_threshold_tokens, flush.system_prompt, flush.prompt),
        config_file=Path(config.source) if config.source else None,
        gateway_bind=config.gateway.bind,
        gateway_port=config.gateway.port,
        gateway_control_api=config.gateway.control_api,
        heartbeat=_heartbeat(defaults.heartbeat, None),
        agent_to_agent=config.tools.agent_to_agent,
    )


def _heartbeat(defaults: HeartbeatConfig, own: AgentHeartbeatConfig | None) -> HeartbeatSettings:
    """``agents.defaults.heartbeat`` with an agent's own cadence and model (set ones) over it."""
    every = own.every_minutes if own is not None and own.every_minutes is not None else defaults.every_minutes
    model = own.model if own is not None and own.model is not None else defaults.model
    return HeartbeatSettings(every, model, defaults.prompt, defaults.active_from, defaults.active_until, defaults.ack_max_chars, defaults.target)
