"""The ``[providers.anthropic]`` table."""

import attrs
from clawbot.types import InRange


@attrs.frozen(kw_only=True)
class AnthropicConfig:
    api_key: str = attrs.field(default="", repr=False)  # empty: ANTHROPIC_API_KEY from the environment
    base_url: str = ""  # empty: the SDK's default endpoint
    timeout_s: float = attrs.field(default=600.0, validator=InRange(0.01, 86_400))  # a whole request
    connect_timeout_s: float = attrs.field(default=5.0, validator=InRange(0.01, 600))  # opening the connection: an address that does not answer fails fast
    # silence between two stream events before the answer counts as stalled (the API pings meanwhile)
    stream_idle_timeout_s: float = attrs.field(default=120.0, validator=InRange(0.01, 86_400))
