"""The Telegram channel on its own, through python-telegram-bot, against the fake Bot API.

What it makes of updates (chats, mentions, owners, topics, files), what it sends (HTML,
replies, buttons, files), and how it lives with the network: flood control waited out,
offsets kept across restarts so nothing is answered twice.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from clawbot.types import ApprovalOffer, InboundMessage, OutboundMessage
from clawbot_telegram.channel import TelegramChannel
from clawbot_telegram.config import TelegramConfig

from .fake_bot_api import BOT_ID, BOT_USERNAME, TOKEN, FakeBotApi, User

ALICE = User(111, "Alice", "alice")
MALLORY = User(222, "Mallory", "alice_")  # a username is no proof of anything
GROUP = -100500


class Sink:
    def __init__(self) -> None:
        self.messages: list[InboundMessage] = []

    async def __call__(self, message: InboundMessage) -> asyncio.Future[None]:
        self.messages.append(message)
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        done.set_result(None)
        return done

    def busy(self, message: InboundMessage) -> bool:
        return False

    def approvals_waiting(self, message: InboundMessage) -> frozenset[str]:
        return frozenset()


def make_channel(api: FakeBotApi, tmp_path: Path, **settings) -> TelegramChannel:
    config = TelegramConfig(token=TOKEN, api_base_url=api.base_url, poll_timeout_s=2, owner_ids=["111"], **settings)
    return TelegramChannel(config, state_dir=tmp_path / "telegram")


@contextlib.asynccontextmanager
async def running(channel: TelegramChannel, sink: Sink):
    task = asyncio.create_task(channel.start(sink))
    try:
        yield task
    finally:
        await channel.stop()
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


async def test_direct_and_group_messages_become_inbound_messages(api: FakeBotApi, tmp_path: Path) -> None:
    sink = Sink()
    channel = make_channel(api, tmp_path)
    async with running(channel, sink):
        await api.message(ALICE, "hello")
        await api.message(MALLORY, "hi all", chat_id=GROUP)
        await api.message(MALLORY, f"@{BOT_USERNAME} what time is it", chat_id=GROUP, thread_id=42)
        await api.message(MALLORY, "and you?", chat_id=GROUP, reply_to_bot=1)
        await api.wait_for(lambda: len(sink.messages) == 4, what="four messages")
    dm, plain, mention, reply = sink.messages
    assert (dm.peer_id, dm.chat_type, dm.sender_id, dm.from_owner, dm.mentioned) == ("111", "direct", "111", True, False)
    assert (plain.peer_id, plain.chat_type, plain.sender_id, plain.from_owner, plain.mentioned) == (str(GROUP), "group", "222", False, False)
    assert (mention.mentioned, mention.mentions, mention.thread_id) == (True, (BOT_USERNAME,), "42")
    assert reply.mentioned and reply.reply_to_id == "1"
    assert {m.channel for m in sink.messages} == {"telegram"}
    assert all(TOKEN not in c.params.get("text", "") for c in api.calls)


@pytest.fixture
def user_umask() -> Iterator[None]:
    """The umask most users have (022): files created without a mode of their own are world-readable."""
    old = os.umask(0o022)
    yield
    os.umask(old)


async def test_photos_and_documents_are_downloaded_under_the_state_dir(api: FakeBotApi, tmp_path: Path, user_umask) -> None:
    sink = Sink()
    async with running(make_channel(api, tmp_path), sink):
        await api.message(ALICE, "look", photo=b"\xff\xd8jpeg-bytes")
        await api.message(ALICE, None, document=("notes.txt", b"some notes"))
        await api.wait_for(lambda: len(sink.messages) == 2, what="two messages")
    photo, document = (m.attachments[0] for m in sink.messages)
    assert sink.messages[0].text == "look" and photo.kind == "image" and Path(photo.path).read_bytes() == b"\xff\xd8jpeg-bytes"
    assert (document.kind, document.name, Path(document.path).read_bytes()) == ("document", "notes.txt", b"some notes")
    assert Path(document.path).is_relative_to(tmp_path / "telegram")
    # someone's files in the state dir: private from the start, whatever the umask
    media = Path(photo.path).parent
    assert stat.S_IMODE(media.stat().st_mode) == 0o700
    assert [stat.S_IMODE(Path(a.path).stat().st_mode) for a in (photo, document)] == [0o600, 0o600]


async def test_a_restart_never_hands_over_an_update_twice(api: FakeBotApi, tmp_path: Path) -> None:
    sink = Sink()
    async with running(make_channel(api, tmp_path), sink):
        await api.message(ALICE, "one")
        await api.wait_for(lambda: len(sink.messages) == 1)
    offsets = list((tmp_path / "telegram").glob("offset-*.json"))
    assert [p.name for p in offsets] == [f"offset-{BOT_ID}.json"] and json.loads(offsets[0].read_text())["offset"] > 0
    # Telegram still holds "one" (no poll confirmed it), but the stored offset does
    async with running(make_channel(api, tmp_path), sink):
        await api.message(ALICE, "two")
        await api.wait_for(lambda: len(sink.messages) == 2)
        await asyncio.sleep(0.3)
    assert [m.text for m in sink.messages] == ["one", "two"]


async def test_replies_are_html_quoting_the_message_in_its_topic(api: FakeBotApi, tmp_path: Path) -> None:
    channel = make_channel(api, tmp_path)
    message_id = await channel.send(OutboundMessage("telegram", str(GROUP), "**done** a<b & `x>0`", reply_to_id="17", thread_id="42"))
    (call,) = api.sent()
    assert call.params["text"] == "<b>done</b> a&lt;b &amp; <code>x&gt;0</code>" and call.params["parse_mode"] == "HTML"
    assert call.params["reply_parameters"]["message_id"] == 17 and int(call.params["message_thread_id"]) == 42
    assert message_id is not None and message_id.isdigit()
    await channel.stop()


async def test_refused_html_is_sent_again_as_plain_text(api: FakeBotApi, tmp_path: Path) -> None:
    channel = make_channel(api, tmp_path)
    api.refuse_html = 1
    await channel.send(OutboundMessage("telegram", "111", "**bold** move"))
    (call,) = api.sent()
    assert call.params["text"] == "**bold** move" and "parse_mode" not in call.params
    await channel.stop()


async def test_notices_are_marked_and_approvals_are_buttons(api: FakeBotApi, tmp_path: Path) -> None:
    channel = make_channel(api, tmp_path)
    offer = ApprovalOffer("ab12cd", summary="exec: ls")
    await channel.send(OutboundMessage("telegram", "111", "Approval needed (ab12cd)\n│ ls <dir>", notice=True, approval=offer))
    (call,) = api.sent()
    assert call.params["text"] == "<i>[clawbot] Approval needed (ab12cd)</i>\n<i>[clawbot] │ ls &lt;dir&gt;</i>"
    buttons = [(b["text"], b["callback_data"]) for row in call.params["reply_markup"]["inline_keyboard"] for b in row]
    assert buttons == [("Allow once", "/approve ab12cd allow-once"), ("Allow always", "/approve ab12cd allow-always"), ("Deny", "/approve ab12cd deny")]
    sink = Sink()
    async with running(channel, sink):
        await api.press(MALLORY, call, "/approve ab12cd allow-once")
        await api.wait_for(lambda: sink.messages)
    (pressed,) = sink.messages
    assert (pressed.text, pressed.sender_id, pressed.from_owner) == ("/approve ab12cd allow-once", "222", False)
    assert [c.method for c in api.calls].count("answerCallbackQuery") == 1


async def test_files_go_out_as_photos_and_documents(api: FakeBotApi, tmp_path: Path) -> None:
    picture, report = tmp_path / "chart.png", tmp_path / "report.pdf"
    picture.write_bytes(b"png-bytes")
    report.write_bytes(b"pdf-bytes")
    channel = make_channel(api, tmp_path)
    await channel.send(OutboundMessage("telegram", "111", "the chart", media=(str(picture), str(report))))
    photo, document = api.sent()
    assert (photo.method, photo.files["photo"], photo.params["caption"]) == ("sendPhoto", b"png-bytes", "the chart")
    assert (document.method, document.files["document"], "caption" in document.params) == ("sendDocument", b"pdf-bytes", False)
    await channel.stop()


async def test_flood_control_is_waited_out_then_the_message_is_sent(api: FakeBotApi, tmp_path: Path) -> None:
    channel = make_channel(api, tmp_path)
    await channel.send(OutboundMessage("telegram", "111", "warm up"))
    api.flood(times=1, retry_after=1, method="sendMessage")
    await channel.send(OutboundMessage("telegram", "111", "after the flood"))
    refused, retried = [c for c in api.calls if c.method == "sendMessage"][1:]
    assert (refused.answered, retried.answered) == (429, 200)
    assert retried.at - refused.at >= 1.0
    assert api.texts() == ["warm up", "after the flood"]
    await channel.stop()


@pytest.mark.parametrize("how", ["drop", "502"])
async def test_polling_that_loses_the_api_raises_for_the_gateway_to_restart(api: FakeBotApi, tmp_path: Path, how: str) -> None:
    sink = Sink()
    channel = make_channel(api, tmp_path)
    task = asyncio.create_task(channel.start(sink))
    await api.wait_for(lambda: any(c.method == "getUpdates" for c in api.calls))
    await api.down(how)
    with pytest.raises(ConnectionError) as raised:
        await asyncio.wait_for(task, 10)
    assert TOKEN not in str(raised.value)
    await channel.stop()
