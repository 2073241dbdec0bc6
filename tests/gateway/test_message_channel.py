"""A message belongs to the channel it came in on, whatever its ``channel`` field says: a
channel plugin cannot make its messages count as another channel's (the terminal's, say)."""

from __future__ import annotations

from clawbot.testing import plugin_from_hooks

from ..agent.scripted import ScriptedProvider
from .chatkit import eventually, open_chat


async def test_a_message_labelled_as_another_channel_is_answered_as_the_one_it_came_from(make_kernel, fake_channel) -> None:
    seen = []
    observer = plugin_from_hooks(
        clawbot_message_received=lambda event: seen.append(("received", event.message.channel, event.session_key)),
        clawbot_message_sending=lambda event: seen.append(("sending", event.message.channel, event.session_key)),
    )
    chat = await open_chat(make_kernel, fake_channel, ScriptedProvider("hello"), plugins={"observer": observer})
    try:
        await fake_channel.inject("hi", peer_id="alice", channel="terminal")
        await eventually(lambda: len(fake_channel.sent) >= 1)
    finally:
        await chat.close()
    assert [m.channel for m in fake_channel.sent] == ["fake"]
    assert [channel for _, channel, _ in seen] == ["fake", "fake"], seen
    assert all("terminal" not in key for _, _, key in seen), seen
