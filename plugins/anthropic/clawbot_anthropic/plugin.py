"""Entry point of the Anthropic provider plugin.

Only ``hookimpl`` is imported at module level; the SDK loads on the first model call.
"""

from clawbot import hookimpl


@hookimpl
def clawbot_config_schema():
    from clawbot import ConfigSection

    from clawbot_anthropic.config import AnthropicConfig

    return ConfigSection("providers.anthropic", AnthropicConfig)


@hookimpl
def clawbot_llm_providers(ctx):
    from clawbot_anthropic.config import AnthropicConfig
    from clawbot_anthropic.provider import AnthropicProvider

    return [AnthropicProvider(ctx.section("providers.anthropic") or AnthropicConfig(), env=ctx.env)]
