"""The ``[providers.anthropic]`` table."""

import attrs


@attrs.frozen(kw_only=True)
class AnthropicConfig:
    api_key: str = attrs.field(default="", repr=False)  # empty: ANTHROPIC_API_KEY from the environment
    base_url: str = ""  # empty: the SDK's default endpoint
    timeout_s: float = 600.0  # a whole request
    connect_timeout_s: float = 5.0  # opening the connection: an address that does not answer fails fast
    # silence between two stream events before the answer counts as stalled (the API pings meanwhile)
    stream_idle_timeout_s: float = 120.0
