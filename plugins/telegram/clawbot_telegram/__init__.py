"""clawbot-telegram: a chat channel on Telegram, on python-telegram-bot (long polling)."""
