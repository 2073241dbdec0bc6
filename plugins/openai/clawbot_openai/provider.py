"""Placeholder until the provider lands (being written)."""

from clawbot import LLMProvider


class OpenAIProvider(LLMProvider):
    name = "openai"

    def __init__(self, config, env=None):
        self.config = config
        self.env = dict(env or {})

    async def complete(self, request, on_text=None):
        raise NotImplementedError
