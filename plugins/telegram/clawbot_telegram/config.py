"""The ``[channels.telegram]`` table: the access settings every channel shares, and the bot's own."""

import attrs
from clawbot.types import ChannelConfig, InRange

TELEGRAM_API = "https://api.telegram.org"


def _a_token(instance: object, attribute: attrs.Attribute, value: str) -> None:
    if not value.strip() or any(c.isspace() for c in value):
        raise ValueError('token must be the bot token @BotFather gave (no spaces); write "${TELEGRAM_BOT_TOKEN}"')


@attrs.frozen(kw_only=True)
class TelegramConfig(ChannelConfig):
    """``token``: the bot's token from @BotFather (write ``"${TELEGRAM_BOT_TOKEN}"``, never
    the token itself). ``owner_ids`` and ``allow_from`` hold numeric Telegram user ids, never
    usernames: a username can be given away and taken by someone else."""

    token: str = attrs.field(repr=False, validator=_a_token)
    api_base_url: str = TELEGRAM_API
    poll_timeout_s: int = attrs.field(default=30, validator=InRange(1, 600))
    request_timeout_s: float = attrs.field(default=30.0, validator=InRange(1, 600))
    max_download_mb: int = attrs.field(default=20, validator=InRange(1, 2000))
