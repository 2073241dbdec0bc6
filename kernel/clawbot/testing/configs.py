"""The configuration hooks see, built in a test without a file or a kernel."""

from __future__ import annotations

from typing import Any

from clawbot.config.schema import AgentDefaults, AgentsConfig, ClawbotConfig, CoreConfig


def config_with_agent_defaults(**defaults: Any) -> Any:
    """The configuration an empty ``clawbot.toml`` gives, with these ``[agents.defaults]``
    values (``model_aliases={...}``, ``owner_ids=[...]``): a ``ctx.config`` for a test that
    calls a hook function directly. A test with a kernel reads ``kernel.config`` instead."""
    return ClawbotConfig(core=CoreConfig(agents=AgentsConfig(defaults=AgentDefaults(**defaults))))
