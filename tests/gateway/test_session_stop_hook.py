"""``/stop``, ``/new`` and ``/reset`` tell plugins through ``clawbot_session_stop``, so the
background work a chat started (a plugin's sub-agents) ends with it, and ``/stop`` says what
else it stopped."""

from __future__ import annotations

import pytest
from clawbot import SessionEvent
from clawbot.testing import plugin_from_hooks

from ..agent.scripted import ScriptedProvider
from .chatkit import open_chat

OWNER = {"peer_id": "alice", "from_owner": True}


@pytest.mark.hook_emission("clawbot_session_stop")
async def test_hook_session_stop_is_called_by_stop_and_new_and_stop_reports_what_it_stopped(make_kernel, fake_channel) -> None:
    events: list[SessionEvent] = []

    def stopped(event: SessionEvent) -> str | None:
        events.append(event)
        return "2 download(s) stopped too." if event.reason == "/stop" else None

    downloads = plugin_from_hooks(clawbot_session_stop=stopped)
    chat = await open_chat(make_kernel, fake_channel, ScriptedProvider("hi"), plugins={"downloads": downloads})
    await fake_channel.inject("hello", **OWNER)
    await fake_channel.inject("/stop", **OWNER)
    await fake_channel.inject("/new", **OWNER)
    await chat.close()
    assert [(e.session_key, e.reason) for e in events] == [("agent:main:main", "/stop"), ("agent:main:main", "/new")]
    assert events[0].session_id  # the session the first message opened
    assert fake_channel.texts()[1] == "Stopped. 2 download(s) stopped too."


async def test_stop_with_nothing_stopped_anywhere_says_nothing_runs(make_kernel, fake_channel) -> None:
    quiet = plugin_from_hooks(clawbot_session_stop=lambda event: None)
    chat = await open_chat(make_kernel, fake_channel, ScriptedProvider("hi"), plugins={"quiet": quiet})
    await fake_channel.inject("/stop", **OWNER)
    await chat.close()
    assert fake_channel.texts() == ["Nothing is running."]
