"""Entry point of the Telegram channel plugin.

Only ``hookimpl`` is imported at module level: plugin discovery must stay cheap, so
python-telegram-bot loads when the channel starts.
"""

from clawbot import hookimpl


@hookimpl
def clawbot_config_schema():
    from clawbot import ConfigSection

    from clawbot_telegram.config import TelegramConfig

    return ConfigSection("channels.telegram", TelegramConfig)


@hookimpl
def clawbot_channels(ctx):
    config = ctx.section("channels.telegram")
    if config is None:  # installed but not configured (no token): nothing to run
        return []
    from clawbot_telegram.channel import TelegramChannel

    return [TelegramChannel(config, state_dir=ctx.state_dir / "telegram")]
