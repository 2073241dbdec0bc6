"""Telegram end to end: ``clawbot run`` polls the fake Bot API through python-telegram-bot and
answers with the real agent loop on the fake LLM.

Strangers pair before they are answered; in a group only a mention is answered and only the
owner's button approves; a long reply arrives in pieces Telegram takes; flood control and
an API that goes away and comes back cost neither a reply nor a duplicate.
"""

from __future__ import annotations

import asyncio
import html
import re
from pathlib import Path

import pytest

from .fake_bot_api import BOT_USERNAME, FakeBotApi, User
from .gatewaykit import clawbot, clawbot_run, config_text

ALICE = User(111, "Alice", "alice")  # the owner
MALLORY = User(222, "Mallory", "alice_owner")  # in the group; her username proves nothing
BOB = User(333, "Bob", "bob")  # a stranger
GROUP = -100500
OWNER = f'owner_ids = ["{ALICE.id}"]\nallow_from = ["{ALICE.id}"]\ngroups = ["{GROUP}"]\n'


@pytest.fixture
def setup(tmp_path: Path, api: FakeBotApi, fake_llm_thread):
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    return tmp_path / "home", config_text(api, fake_llm_thread.base_url, workspace, OWNER), fake_llm_thread, workspace


def visible(text: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", text))


async def quiet(seconds: float = 1.5) -> None:
    """Time for an answer that must not come."""
    await asyncio.sleep(seconds)


async def test_a_stranger_pairs_before_the_agent_answers(api: FakeBotApi, setup) -> None:
    home, config, llm, _ = setup
    llm.reply("Hello Bob, nice to meet you.")
    async with clawbot_run(home, api, config):
        await api.message(BOB, "hello there", photo=b"\xff\xd8a stranger's photo")
        await api.wait_for(lambda: api.texts(BOB.id), what="the pairing answer")
        (answer,) = api.texts(BOB.id)
        code = re.search(r"\b[A-Z0-9]{8}\b", visible(answer))
        assert code, answer
        await quiet()
        assert api.texts(BOB.id) == [answer] and llm.requests == []  # no turn for a stranger
        assert not [c for c in api.calls if c.method == "getFile"]  # nor a download of his file
        status, out = await clawbot(home, "pairing", "approve", "telegram", code.group())
        assert status == 0, out
        await api.message(BOB, "hello again", photo=b"\xff\xd8now it is fetched")
        await api.wait_for(lambda: len(api.texts(BOB.id)) == 2, what="the agent's reply")
        assert [c for c in api.calls if c.method == "getFile"]
    assert visible(api.texts(BOB.id)[1]) == "Hello Bob, nice to meet you."
    assert len(llm.requests) == 1


async def test_a_paired_stranger_gets_a_session_of_their_own_without_memory_md(api: FakeBotApi, setup) -> None:
    home, config, llm, workspace = setup
    (workspace / "MEMORY.md").write_text("# Memory\nThe safe code is 4711.\n")
    llm.reply("Hi Alice.")
    llm.reply("Hello Bob.")
    async with clawbot_run(home, api, config):
        await api.message(ALICE, "my bank pin is 9876, remember it")
        await api.wait_for(lambda: api.texts(ALICE.id), what="the owner's reply")
        await api.message(BOB, "hello there")
        await api.wait_for(lambda: api.texts(BOB.id), what="the pairing answer")
        code = re.search(r"\b[A-Z0-9]{8}\b", visible(api.texts(BOB.id)[0])).group()
        status, out = await clawbot(home, "pairing", "approve", "telegram", code)
        assert status == 0, out
        assert f"they get a session of their own, agent:main:telegram:dm:{BOB.id} (not the main session; no MEMORY.md)" in out
        await api.message(BOB, "what do you know about the owner?")
        await api.wait_for(lambda: len(api.texts(BOB.id)) == 2, what="the agent's reply to Bob")
        status, listed = await clawbot(home, "sessions", "list")
    owner, stranger = (str(r.body) for r in llm.requests)
    assert "The safe code is 4711." in owner  # the owner's main session loads MEMORY.md
    assert "4711" not in stranger and "9876" not in stranger  # neither MEMORY.md nor the owner's history
    assert "what do you know about the owner?" in stranger
    assert status == 0 and "agent:main:main" in listed and f"agent:main:telegram:dm:{BOB.id}" in listed


async def test_in_a_group_only_a_mention_is_answered(api: FakeBotApi, setup) -> None:
    home, config, llm, _ = setup
    llm.reply("Here I am.")
    async with clawbot_run(home, api, config):
        await api.message(MALLORY, "just chatting among us", chat_id=GROUP)
        await quiet()
        assert api.texts(GROUP) == [] and llm.requests == []
        await api.message(MALLORY, f"@{BOT_USERNAME} are you there?", chat_id=GROUP)
        await api.wait_for(lambda: api.texts(GROUP), what="the answer to the mention")
    assert [visible(t) for t in api.texts(GROUP)] == ["Here I am."]
    (reply,) = api.sent(chat_id=GROUP)
    assert reply.params["reply_parameters"]["message_id"] > 0  # a native reply to the mention


async def test_only_the_owners_button_approves_in_a_group(api: FakeBotApi, setup) -> None:
    home, config, llm, workspace = setup
    llm.tool_call("exec", {"command": "touch approved.txt"})
    llm.reply("That needs approval.")
    llm.reply("Done: approved.txt exists.")
    async with clawbot_run(home, api, config):
        await api.message(ALICE, f"@{BOT_USERNAME} create approved.txt", chat_id=GROUP)
        await api.wait_for(lambda: any("reply_markup" in c.params for c in api.sent(chat_id=GROUP)), what="the approval buttons")
        notice = next(c for c in api.sent(chat_id=GROUP) if "reply_markup" in c.params)
        assert "[clawbot]" in notice.params["text"]
        once = next(b["callback_data"] for row in notice.params["reply_markup"]["inline_keyboard"] for b in row if b["callback_data"].endswith("allow-once"))
        # the turn goes on past the notice: its reply is out before Mallory's press is counted
        await api.wait_for(lambda: "That needs approval." in [visible(t) for t in api.texts(GROUP)], what="the turn's reply")
        before = len(api.sent(chat_id=GROUP))
        await api.press(MALLORY, notice, once)
        await api.wait_for(lambda: len(api.sent(chat_id=GROUP)) > before, what="the answer to Mallory")
        refusal = visible(api.sent(chat_id=GROUP)[-1].params["text"])
        assert "Only the owner can use /approve" in refusal, refusal
        await quiet(1.0)
        assert not (workspace / "approved.txt").exists()
        await api.press(ALICE, notice, once)
        await api.wait_for(lambda: (workspace / "approved.txt").exists(), what="the approved command")
        await api.wait_for(lambda: "Done: approved.txt exists." in [visible(t) for t in api.texts(GROUP)], what="the report")


async def test_a_long_reply_arrives_in_pieces_telegram_takes(api: FakeBotApi, setup) -> None:
    home, config, llm, _ = setup
    paragraph = "Compare a < b & b > c, then <tags> & more & more. " * 8
    reply = "\n\n".join(f"{i}: {paragraph.strip()}" for i in range(25))[:10_000]
    assert len(reply) == 10_000
    llm.reply(reply)
    async with clawbot_run(home, api, config):
        await api.message(ALICE, "tell me everything")
        await api.wait_for(lambda: sum(len(visible(t)) for t in api.texts(ALICE.id)) >= 9_900, what="the whole reply")
        await quiet(0.5)
    texts = api.texts(ALICE.id)
    assert len(texts) >= 3 and all(len(t) <= 4096 for t in texts)
    assert all(c.params["parse_mode"] == "HTML" for c in api.sent(chat_id=ALICE.id))
    joined = " ".join(visible(t) for t in texts)
    assert re.sub(r"\s+", " ", joined).strip() == re.sub(r"\s+", " ", reply).strip()


async def test_flood_control_delays_the_reply_without_losing_it(api: FakeBotApi, setup) -> None:
    home, config, llm, _ = setup
    llm.reply("Worth the wait.")
    async with clawbot_run(home, api, config):
        api.flood(times=1, retry_after=2, method="sendMessage")
        await api.message(ALICE, "hi")
        await api.wait_for(lambda: api.texts(ALICE.id), what="the reply")
        await quiet(0.5)
    refused, sent = [c for c in api.calls if c.method == "sendMessage"]
    assert (refused.answered, sent.answered) == (429, 200) and sent.at - refused.at >= 2.0
    assert [visible(t) for t in api.texts(ALICE.id)] == ["Worth the wait."]


@pytest.mark.parametrize("how", ["drop", "502"])
async def test_an_api_gone_for_a_while_costs_no_reply_and_repeats_none(api: FakeBotApi, setup, how: str) -> None:
    home, config, llm, _ = setup
    llm.reply("First answer.")
    llm.reply("Second answer.")
    async with clawbot_run(home, api, config):
        await api.message(ALICE, "first")
        await api.wait_for(lambda: api.texts(ALICE.id), what="the first reply")
        await api.down(how)
        await api.message(ALICE, "second, sent while the bot cannot reach Telegram")
        await asyncio.sleep(3)
        api.up()
        await api.wait_for(lambda: len(api.texts(ALICE.id)) == 2, timeout=30, what="the second reply")
        polls = sum(c.method == "getUpdates" for c in api.calls)
        await api.wait_for(lambda: sum(c.method == "getUpdates" for c in api.calls) > polls + 1, what="polling again")
    assert [visible(t) for t in api.texts(ALICE.id)] == ["First answer.", "Second answer."]
    assert len(llm.requests) == 2
