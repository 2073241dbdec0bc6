"""Entry point of the OpenAI provider plugin.

Only ``hookimpl`` is imported at module level; the SDK loads on the first model call.
"""

from clawbot import hookimpl


@hookimpl
def clawbot_config_schema():
    from clawbot import ConfigSection

    from clawbot_openai.config import OpenAIConfig

    return ConfigSection("providers.openai", OpenAIConfig)


@hookimpl
def clawbot_llm_providers(ctx):
    from clawbot_openai.config import OpenAIConfig
    from clawbot_openai.provider import OpenAIProvider

    return [OpenAIProvider(ctx.section("providers.openai") or OpenAIConfig(), env=ctx.env)]
