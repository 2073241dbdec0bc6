"""The ``[channels.webchat]`` table."""

import attrs


@attrs.frozen(kw_only=True)
class WebchatConfig:
    enabled: bool = True
    user_name: str = "you"
