"""Telegram keeps the channel contract across a crash: a message the channel confirmed to
Telegram is answered, or its sender told, after ``clawbot run`` was killed (SIGKILL) and
started again; a message Telegram delivers twice is answered once; a heartbeat after a
restart reaches the chat a person wrote from before it."""

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
from clawbot.testing.fake_llm import Reply

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


async def test_a_heartbeat_after_a_restart_reaches_the_chat_written_from_before_it(
    telegram: TelegramUnderTest, api: FakeBotApi, fake_llm_thread, tmp_path: Path
) -> None:
    (tmp_path / "workspace" / "HEARTBEAT.md").write_text("- remind me of the dentist\n", encoding="utf-8")

    def brain(request: Any) -> Reply:  # answers by who asks: the heartbeat, or Alice
        asked = str(request.body["messages"][-1]["content"])
        return Reply(text="Reminder: the dentist at 15:00." if "HEARTBEAT.md" in asked else "Hello Alice.")

    fake_llm_thread.queue(*[brain] * 4)
    async with telegram.run():  # its first heartbeat has no chat to go to yet
        await telegram.write(0, "hi")
        await api.wait_for(lambda: telegram.received(0) == ["Hello Alice."], what="the answer")
    async with telegram.run():  # the heartbeat due at the start goes to Alice's chat
        await api.wait_for(lambda: len(telegram.received(0)) == 2, timeout=30, what="the heartbeat's reminder")
    assert telegram.received(0) == ["Hello Alice.", "Reminder: the dentist at 15:00."]
