"""The fake Telegram Bot API on 127.0.0.1 every test here talks to."""

from __future__ import annotations

import pytest

from .fake_bot_api import FakeBotApi


@pytest.fixture
async def api():
    fake = FakeBotApi()
    await fake.start()
    yield fake
    await fake.close()
