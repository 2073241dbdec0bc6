"""What ``/new`` and ``/reset`` say they did: the running turn stopped, the queued messages
dropped unanswered, and the session's ``/model`` choice kept (it belongs to the chat, not to
one conversation; ``clawbot sessions reset`` keeps it too).
"""

from __future__ import annotations

import asyncio

import pytest

from ..agent.scripted import ScriptedProvider
from ..e2e.e2etools import providers_plugin
from .chatkit import eventually, open_chat

KEY = "agent:main:main"


@pytest.mark.parametrize("command", ["/new", "/reset"])
async def test_new_says_which_queued_messages_were_dropped_and_keeps_the_model_choice(make_kernel, fake_channel, command) -> None:
    provider = ScriptedProvider("the answer", delay=5)  # the cancelled turn never takes it
    chat = await open_chat(make_kernel, fake_channel, provider, plugins={"llm": providers_plugin(provider)}, model="slow")
    await fake_channel.inject("/model scripted/quick", peer_id="alice", from_owner=True)
    await fake_channel.inject("think for a long time", peer_id="alice", from_owner=True, wait=False)
    await eventually(lambda: provider.requests)
    for queued in ("and then this", "and this too"):
        await fake_channel.inject(queued, peer_id="alice", from_owner=True, wait=False)
    async with asyncio.timeout(3):
        await fake_channel.inject(command, peer_id="alice", from_owner=True)
    provider.delay = 0
    await fake_channel.inject("hello again", peer_id="alice", from_owner=True)
    await chat.close()

    assert fake_channel.texts()[1:] == [
        "Started a new session; the previous conversation is kept on disk. The running turn was stopped. "
        "2 queued messages were dropped unanswered. It still uses scripted/quick, chosen with /model (/model default goes back).",
        "the answer",
    ]
    assert [r.model for r in provider.requests] == ["quick", "quick"]  # the queued ones never reached the model
    assert chat.kernel.sessions.get(KEY).model_override == "scripted/quick"


async def test_new_without_a_model_choice_says_nothing_of_one(make_kernel, fake_channel) -> None:
    provider = ScriptedProvider()
    chat = await open_chat(make_kernel, fake_channel, provider)
    await fake_channel.inject("/new", peer_id="alice", from_owner=True)
    await chat.close()
    assert fake_channel.texts() == ["Started a new session; the previous conversation is kept on disk."]
