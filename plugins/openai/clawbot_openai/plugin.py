"""Entry point of the OpenAI provider plugin: ``openai`` and ``ollama`` (OpenAI-compatible).

Only ``hookimpl`` is imported at module level; the SDK loads on the first model call.
"""

from clawbot import hookimpl


@hookimpl
def clawbot_config_schema():
    from clawbot import ConfigSection

    from clawbot_openai.config import OllamaConfig, OpenAIConfig

    return [ConfigSection("providers.openai", OpenAIConfig), ConfigSection("providers.ollama", OllamaConfig)]


@hookimpl
def clawbot_llm_providers(ctx):
    from clawbot_openai.config import OllamaConfig, OpenAIConfig
    from clawbot_openai.provider import OllamaProvider, OpenAIProvider

    return [
        OpenAIProvider(ctx.section("providers.openai") or OpenAIConfig(), env=ctx.env),
        OllamaProvider(ctx.section("providers.ollama") or OllamaConfig(), env=ctx.env),
    ]
