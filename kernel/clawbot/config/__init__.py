"""clawbot.toml: location, validation and the attrs classes it becomes."""

from clawbot.config.problems import ConfigError, ConfigProblem
from clawbot.config.schema import (
    AgentConfig,
    AgentDefaults,
    AgentsConfig,
    ClawbotConfig,
    CoreConfig,
    LoggingConfig,
    ModelConfig,
    PluginsConfig,
)

__all__ = [
    "AgentConfig",
    "AgentDefaults",
    "AgentsConfig",
    "ClawbotConfig",
    "ConfigError",
    "ConfigProblem",
    "CoreConfig",
    "LoggingConfig",
    "ModelConfig",
    "PluginsConfig",
]
