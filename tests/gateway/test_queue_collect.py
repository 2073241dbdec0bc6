"""Messages that arrive while a turn runs wait: collected into one next turn (each kept with
its sender), or answered one by one; past the cap the oldest are dropped and their senders
told; /stop drops them and says how many."""

from __future__ import annotations

import asyncio

import pytest
from clawbot.agent.conversation import Conversation
from clawbot.agent.models import ModelChoice
from clawbot.agent.owners import owner_ids_for, turn_trust
from clawbot.agent.user_turns import speaker
from clawbot.gateway.runner import DROPPED_NOTICE, Gateway
from clawbot.types import InboundMessage, Role

from ..agent.scripted import ScriptedProvider


async def _until(predicate, timeout: float = 30.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not predicate():
        assert loop.time() < deadline, "timed out"
        await asyncio.sleep(0.005)


def _responder(kernel, provider):
    conversation = Conversation(kernel, ModelChoice(provider, "m"), "main", services=None)

    async def respond(message, session_key, *, earlier=()):
        return (await conversation.send(session_key, message.text, origin=message, earlier=earlier)).text

    return respond


GROUP = {"chat_type": "group", "peer_id": "team"}


async def test_collect_answers_what_waited_as_one_turn_keeping_each_sender(make_kernel, fake_channel) -> None:
    kernel = await make_kernel(config='[gateway.queue]\nmode = "collect"\ndebounce_ms = 50\n')
    provider = ScriptedProvider("first answer", "one answer to both", delay=0.3)
    gateway = Gateway(kernel, _responder(kernel, provider), "main")
    task = asyncio.create_task(gateway.run([fake_channel]))
    await fake_channel.wait_started()
    await fake_channel.inject("hello all", sender_id="1", sender_name="Ann", wait=False, **GROUP)
    await _until(lambda: provider.requests)
    await fake_channel.inject("what time is it?", sender_id="2", sender_name="Bob", wait=False, **GROUP)
    last = await fake_channel.inject("and the weather?", sender_id="3", sender_name="Cy", wait=False, **GROUP)
    await _until(lambda: len(fake_channel.sent) == 2)
    gateway.stop()
    await task
    assert len(provider.requests) == 2  # two turns, not three
    assert fake_channel.texts() == ["first answer", "one answer to both"]
    assert fake_channel.sent[1].reply_to_id == last.message_id  # the reply answers the last message
    loaded = kernel.sessions.open("agent:main:fake:group:team").transcript.load()
    users = [speaker(m) for m in loaded.messages() if m.role == Role.USER]
    assert [(u.name, u.sender_id, u.text) for u in users] == [
        ("Ann", "1", "hello all"),
        ("Bob", "2", "what time is it?"),
        ("Cy", "3", "and the weather?"),
    ]
    # the model saw both waiting messages, each with its own sender, in one request
    sent = [m.text for m in provider.requests[1].messages if m.role == Role.USER]
    assert "Bob (id 2): what time is it?" in sent[1] and "and the weather?" in sent[2]


async def test_collect_with_a_plain_responder_joins_the_texts_in_order(make_kernel, fake_channel) -> None:
    kernel = await make_kernel(config="[gateway.queue]\ndebounce_ms = 50\n")
    seen: list[str] = []
    release = asyncio.Event()

    async def respond(message, session_key):
        seen.append(message.text)
        await release.wait()
        return "ok"

    gateway = Gateway(kernel, respond, "main")
    task = asyncio.create_task(gateway.run([fake_channel]))
    await fake_channel.wait_started()
    await fake_channel.inject("one", wait=False, from_owner=True)
    await _until(lambda: seen)
    await fake_channel.inject("two", wait=False, from_owner=True)
    await fake_channel.inject("three", wait=False, from_owner=True)
    release.set()
    await _until(lambda: len(fake_channel.sent) == 2)
    gateway.stop()
    await task
    assert seen == ["one", "two\n\nthree"]


async def test_collect_waits_for_quiet_before_the_next_turn(make_kernel, fake_channel) -> None:
    kernel = await make_kernel(config="[gateway.queue]\ndebounce_ms = 300\n")
    seen: list[str] = []
    release = asyncio.Event()

    async def respond(message, session_key):
        seen.append(message.text)
        await release.wait()
        return "ok"

    gateway = Gateway(kernel, respond, "main")
    task = asyncio.create_task(gateway.run([fake_channel]))
    await fake_channel.wait_started()
    await fake_channel.inject("one", wait=False, from_owner=True)
    await _until(lambda: seen)
    await fake_channel.inject("two", wait=False, from_owner=True)
    release.set()
    await _until(lambda: len(fake_channel.sent) == 1)
    await asyncio.sleep(0.15)  # still typing: within the debounce
    await fake_channel.inject("three", wait=False, from_owner=True)
    await _until(lambda: len(fake_channel.sent) == 2)
    gateway.stop()
    await task
    assert seen == ["one", "two\n\nthree"]


async def test_followup_answers_each_waiting_message_as_its_own_turn(make_kernel, fake_channel) -> None:
    kernel = await make_kernel(config='[gateway.queue]\nmode = "followup"\n')
    seen: list[str] = []
    release = asyncio.Event()

    async def respond(message, session_key):
        seen.append(message.text)
        await release.wait()
        return f"re {message.text}"

    gateway = Gateway(kernel, respond, "main")
    task = asyncio.create_task(gateway.run([fake_channel]))
    await fake_channel.wait_started()
    for text in ("one", "two", "three"):
        await fake_channel.inject(text, wait=False, from_owner=True)
    release.set()
    await _until(lambda: len(fake_channel.sent) == 3)
    gateway.stop()
    await task
    assert seen == ["one", "two", "three"]
    assert fake_channel.texts() == ["re one", "re two", "re three"]


async def test_past_the_cap_the_oldest_waiting_are_dropped_and_their_senders_told(make_kernel, fake_channel) -> None:
    kernel = await make_kernel(config='[gateway.queue]\nmode = "followup"\ncap = 2\n')
    seen: list[str] = []
    release = asyncio.Event()

    async def respond(message, session_key):
        seen.append(message.text)
        await release.wait()
        return f"re {message.text}"

    gateway = Gateway(kernel, respond, "main")
    task = asyncio.create_task(gateway.run([fake_channel]))
    await fake_channel.wait_started()
    await fake_channel.inject("running", wait=False, from_owner=True)
    await _until(lambda: seen)
    dropped = await fake_channel.inject("w1", wait=False, from_owner=True)
    await fake_channel.inject("w2", wait=False, from_owner=True)
    await fake_channel.inject("w3", wait=False, from_owner=True)
    await _until(lambda: fake_channel.sent)
    (notice,) = fake_channel.sent
    assert notice.notice and notice.text == DROPPED_NOTICE and notice.reply_to_id == dropped.message_id
    release.set()
    await _until(lambda: len(fake_channel.sent) == 4)
    gateway.stop()
    await task
    assert seen == ["running", "w2", "w3"]


async def test_stop_aborts_the_turn_and_drops_the_queue_saying_how_many(make_kernel, fake_channel) -> None:
    kernel = await make_kernel(config="[gateway.queue]\ndebounce_ms = 0\n")
    seen: list[str] = []

    async def respond(message, session_key):
        seen.append(message.text)
        await asyncio.sleep(30)
        return "never"

    gateway = Gateway(kernel, respond, "main")
    task = asyncio.create_task(gateway.run([fake_channel]))
    await fake_channel.wait_started()
    await fake_channel.inject("long job", wait=False, from_owner=True)
    await _until(lambda: seen)
    await fake_channel.inject("also this", wait=False, from_owner=True)
    await fake_channel.inject("and this", wait=False, from_owner=True)
    await fake_channel.inject("/stop", from_owner=True)
    await asyncio.sleep(0.05)
    gateway.stop()
    await task
    assert seen == ["long job"]
    assert fake_channel.texts() == ["Stopped. 2 queued messages were dropped unanswered."]


@pytest.mark.parametrize(
    ("waiting", "answered_as"),
    [
        ([("2", False), ("1", True)], ("2", "Bob", "non-owner")),
        ([("1", True), ("1", True)], ("1", "Ann", "owner")),
        ([("2", False), ("3", False)], ("3", "Cy", "non-owner")),
    ],
    ids=["a member waited before the owner's last word", "only the owner waited", "two members waited"],
)
async def test_a_plain_responder_gets_what_waited_as_the_least_trusted_sender(make_kernel, fake_channel, waiting, answered_as) -> None:
    """A responder that takes one message gets the texts that waited joined into one: the
    owner's last word does not lend the owner's trust to a member's text answered with it."""
    kernel = await make_kernel(config="[gateway.queue]\ndebounce_ms = 50\n")
    seen: list[InboundMessage] = []
    release = asyncio.Event()

    async def respond(message, session_key):
        seen.append(message)
        await release.wait()
        return "ok"

    names = {"1": "Ann", "2": "Bob", "3": "Cy"}
    gateway = Gateway(kernel, respond, "main")
    task = asyncio.create_task(gateway.run([fake_channel]))
    await fake_channel.wait_started()
    await fake_channel.inject("one", sender_id="1", sender_name="Ann", from_owner=True, wait=False, **GROUP)
    await _until(lambda: seen)
    for number, (sender, owner) in enumerate(waiting):
        await fake_channel.inject(f"text {number}", sender_id=sender, sender_name=names[sender], from_owner=owner, wait=False, **GROUP)
    release.set()
    await _until(lambda: len(fake_channel.sent) == 2)
    gateway.stop()
    await task
    joined = seen[1]
    assert joined.text == "text 0\n\ntext 1"
    trust = turn_trust(joined, owner_ids_for(kernel.config, joined.channel))
    assert (joined.sender_id, joined.sender_name, trust.value) == answered_as
