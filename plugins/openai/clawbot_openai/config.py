"""The ``[providers.openai]`` table."""

from typing import Literal

import attrs


@attrs.frozen(kw_only=True)
class OpenAIConfig:
    api_key: str = ""  # empty: OPENAI_API_KEY from the environment
    base_url: str = ""  # e.g. http://127.0.0.1:11434/v1 for Ollama; empty: the SDK default
    api: Literal["chat", "responses"] = "chat"
    timeout_s: float = 600.0
