"""Telegram keeps the channel contract across a crash: a message the channel confirmed to
Telegram is answered, or its sender told, after ``clawbot run`` was killed (SIGKILL) and
started again; a message Telegram delivers twice is answered once."""

from __future__ import annotations

import contextlib
import html
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import attrs
import pytest
from clawbot.testing.channel_contract import CONTRACT_CONFIG, answered_or_told_after_a_crash

from .fake_bot_api import FakeBotApi, User
from .gatewaykit import clawbot_run, config_text

ALICE = User(111, "Alice", "alice")
CAROL = User(444, "Carol", "carol")
ALLOWED = f'owner_ids = ["{ALICE.id}"]\nallow_from = ["{ALICE.id}", "{CAROL.id}"]\n'


def visible(text: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", text))


@attrs.define
class TelegramUnderTest:
    """The Telegram channel as the contract checks drive it: chat 0 is Alice's, chat 1 Carol's."""

    api: FakeBotApi
    home: Path
    config: str
    last_update: dict[int, int] = attrs.field(factory=dict)

    @contextlib.asynccontextmanager
    async def run(self) -> AsyncIterator[Any]:
        async with clawbot_run(self.home, self.api, self.config) as running:
            yield running.process

    def _user(self, chat: int) -> User:
        return (ALICE, CAROL)[chat]

    async def write(self, chat: int, text: str) -> None:
        update = await self.api.message(self._user(chat), text)
        self.last_update[chat] = update["update_id"]

    def confirmed(self, chat: int) -> bool:
        last = self.last_update[chat]
        return any(c.method == "getUpdates" and int(c.params.get("offset") or 0) > last for c in self.api.calls)

    def received(self, chat: int) -> list[str]:
        return [visible(text) for text in self.api.texts(self._user(chat).id)]


@pytest.fixture
def telegram(tmp_path: Path, api: FakeBotApi, fake_llm_thread) -> TelegramUnderTest:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    config = config_text(api, fake_llm_thread.base_url, workspace, ALLOWED) + CONTRACT_CONFIG
    return TelegramUnderTest(api, tmp_path / "home", config)


async def test_a_crash_mid_turn_loses_no_message(telegram: TelegramUnderTest, fake_llm_thread) -> None:
    await answered_or_told_after_a_crash(telegram, fake_llm_thread)


async def test_a_message_delivered_twice_is_answered_once(telegram: TelegramUnderTest, api: FakeBotApi, fake_llm_thread) -> None:
    fake_llm_thread.reply("One answer.")
    fake_llm_thread.reply("Another answer.")
    async with telegram.run():
        update = await api.message(ALICE, "hello")
        await api.wait_for(lambda: telegram.received(0), what="the answer")
        # Telegram delivers an update again when its offset was not confirmed before a crash
        await api._push({**update, "update_id": update["update_id"] + 1000})
        await api.wait_for(lambda: any(c.method == "getUpdates" and int(c.params.get("offset") or 0) > update["update_id"] + 1000 for c in api.calls))
        await api.message(ALICE, "and now?")
        await api.wait_for(lambda: len(telegram.received(0)) == 2, what="the answer to the next message")
    asked = [str(request.body["messages"][-1]["content"]) for request in fake_llm_thread.requests]
    assert ["hello" in text for text in asked] == [True, False] and "and now?" in asked[1], asked
    assert telegram.received(0) == ["One answer.", "Another answer."]
