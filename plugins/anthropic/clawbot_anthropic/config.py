"""The ``[providers.anthropic]`` table."""

import attrs


@attrs.frozen(kw_only=True)
class AnthropicConfig:
    api_key: str = attrs.field(default="", repr=False)  # empty: ANTHROPIC_API_KEY from the environment
    base_url: str = ""  # empty: the SDK's default endpoint
    timeout_s: float = 600.0
