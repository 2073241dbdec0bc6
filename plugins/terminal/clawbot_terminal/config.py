"""The ``[channels.terminal]`` table."""

import attrs


@attrs.frozen(kw_only=True)
class TerminalConfig:
    enabled: bool = True
    prompt: str = "you> "
    peer_id: str = "local"
    user_name: str = "you"
