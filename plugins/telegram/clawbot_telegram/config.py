"""The ``[channels.telegram]`` table: the access settings every channel shares, and the bot's own."""

import re

import attrs
from clawbot.types import ChannelConfig, InRange, OutOfRange

TELEGRAM_API = "https://api.telegram.org"


def _a_token(instance: object, attribute: attrs.Attribute, value: str) -> None:
    if not value.strip() or any(c.isspace() for c in value):
        raise OutOfRange("token", 'must be the bot token @BotFather gave (no spaces); write "${TELEGRAM_BOT_TOKEN}"')


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

    def __attrs_post_init__(self) -> None:
        # Telegram ids are numbers; a username (which its holder can change or give away)
        # would never match, and the owner would be treated as a stranger
        for key, ids, what in (
            ("owner_ids", self.owner_ids, "a numeric Telegram user id (the bot's /whoami shows yours), not a username"),
            ("allow_from", self.allow_from, 'a numeric Telegram user id or "*", not a username'),
            ("group_allow_from", self.group_allow_from, 'a numeric Telegram user id or "*", not a username'),
            ("groups", self.groups, 'a numeric Telegram chat id (groups are negative, e.g. "-1001234567890") or "*"'),
        ):
            for index, value in enumerate(ids):
                if value != "*" and not _TELEGRAM_ID.fullmatch(value.removeprefix("telegram:")):
                    raise OutOfRange((key, index), f"must be {what}, got {value!r}")


_TELEGRAM_ID = re.compile(r"-?\d{1,20}")
