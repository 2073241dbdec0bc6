"""The ``[providers.openai]`` and ``[providers.ollama]`` tables."""

from typing import Literal

import attrs
from clawbot.types import InRange


@attrs.frozen(kw_only=True)
class OpenAIConfig:
    api_key: str = attrs.field(default="", repr=False)  # empty: OPENAI_API_KEY from the environment
    base_url: str = ""  # e.g. http://127.0.0.1:11434/v1 for Ollama; empty: the SDK default
    api: Literal["chat", "responses"] = "chat"
    timeout_s: float = attrs.field(default=600.0, validator=InRange(0.01, 86_400))  # a whole request
    connect_timeout_s: float = attrs.field(default=5.0, validator=InRange(0.01, 600))  # opening the connection: an address that does not answer fails fast
    # silence between two stream events before the answer counts as stalled; reasoning models
    # may think for minutes without sending anything
    stream_idle_timeout_s: float = attrs.field(default=300.0, validator=InRange(0.01, 86_400))


@attrs.frozen(kw_only=True)
class OllamaConfig:
    api_key: str = attrs.field(default="", repr=False)  # empty: OLLAMA_API_KEY from the environment, else "ollama" (Ollama ignores it)
    base_url: str = ""  # empty: OLLAMA_BASE_URL, else http://127.0.0.1:11434/v1; /api/tags is found beside it
    api: Literal["chat", "responses"] = "chat"
    timeout_s: float = attrs.field(default=600.0, validator=InRange(0.01, 86_400))  # a whole request
    connect_timeout_s: float = attrs.field(default=5.0, validator=InRange(0.01, 600))  # opening the connection: an address that does not answer fails fast
    # silence between two stream events before the answer counts as stalled; a local model may
    # take minutes to load or think
    stream_idle_timeout_s: float = attrs.field(default=300.0, validator=InRange(0.01, 86_400))
    native_tools: bool = True  # false: tools go into the system prompt, calls are parsed from <tool_call> blocks
