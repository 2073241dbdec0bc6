"""The gateway answers channel messages, survives failures and runs the lifecycle hooks."""

from __future__ import annotations

import asyncio

from clawbot import OutboundEvent, OutboundMessage
from clawbot.gateway.runner import Gateway, enabled_channels
from clawbot.testing import FakeChannel, plugin_from_hooks


async def _echo(message, session_key):
    return f"echo {message.text} ({session_key})"


async def _running(gateway: Gateway, *channels: FakeChannel) -> asyncio.Task:
    task = asyncio.create_task(gateway.run(list(channels)))
    for channel in channels:
        await channel.wait_started()
    return task


async def test_inbound_message_is_answered_on_the_same_channel(make_kernel, fake_channel) -> None:
    kernel = await make_kernel(plugins={"fake": fake_channel.as_plugin()})
    assert [c.name for c in enabled_channels(kernel)] == ["fake"]
    gateway = Gateway(kernel, _echo, "main")
    task = await _running(gateway, fake_channel)
    inbound = await fake_channel.inject("hi", peer_id="alice", from_owner=True)
    gateway.stop()
    await task
    (reply,) = fake_channel.sent
    assert reply.text == "echo hi (agent:main:main)"
    assert reply.peer_id == "alice" and reply.reply_to_id == inbound.message_id


async def test_group_messages_get_their_own_session(make_kernel, fake_channel) -> None:
    kernel = await make_kernel()
    gateway = Gateway(kernel, _echo, "main")
    task = await _running(gateway, fake_channel)
    await fake_channel.inject("yo", peer_id="team", chat_type="group")
    gateway.stop()
    await task
    assert fake_channel.texts() == ["echo yo (agent:main:fake:group:team)"]


async def test_a_failing_answer_becomes_a_short_reply_and_the_next_message_works(make_kernel, fake_channel) -> None:
    calls = []

    async def flaky(message, session_key):
        calls.append(message.text)
        if message.text == "boom":
            raise RuntimeError("internal detail that must not leak")
        return "fine"

    kernel = await make_kernel()
    gateway = Gateway(kernel, flaky, "main")
    task = await _running(gateway, fake_channel)
    await fake_channel.inject("boom", from_owner=True)
    await fake_channel.inject("again", from_owner=True)
    gateway.stop()
    await task
    assert fake_channel.texts()[1] == "fine"
    assert "internal detail" not in fake_channel.texts()[0]
    assert "went wrong" in fake_channel.texts()[0]


async def test_a_disconnected_channel_is_restarted(make_kernel, fake_channel) -> None:
    kernel = await make_kernel()
    gateway = Gateway(kernel, _echo, "main", restart_delays=(0.01,))
    task = await _running(gateway, fake_channel)
    await fake_channel.disconnect()
    await fake_channel.wait_started()
    await fake_channel.inject("after reconnect", from_owner=True)
    gateway.stop()
    await task
    assert fake_channel.starts == 2
    assert fake_channel.texts() == ["echo after reconnect (agent:main:main)"]


async def test_one_crashing_channel_does_not_stop_another(make_kernel) -> None:
    steady, crashing = FakeChannel("steady"), FakeChannel("crashing")
    kernel = await make_kernel()
    gateway = Gateway(kernel, _echo, "main", restart_delays=(0.01,))
    task = await _running(gateway, steady, crashing)
    for _ in range(3):
        await crashing.disconnect(RuntimeError("socket closed"))
        await crashing.wait_started()
    await steady.inject("still here", from_owner=True)
    gateway.stop()
    await task
    assert steady.texts() == ["echo still here (agent:main:main)"]
    assert crashing.starts == 4


async def test_lifecycle_hooks_see_messages_and_can_rewrite_or_cancel_replies(make_kernel, fake_channel) -> None:
    seen: list[object] = []

    def sending(event: OutboundEvent):
        if "secret" in event.message.text:
            return False
        return OutboundMessage(**{**_fields(event.message), "text": event.message.text.upper()})

    observer = plugin_from_hooks(
        clawbot_gateway_start=lambda event: seen.append(("start", event.channels)),
        clawbot_gateway_stop=lambda event: seen.append(("stop", event.channels)),
        clawbot_message_received=lambda event: seen.append(("received", event.message.text, event.session_key)),
        clawbot_message_sending=sending,
    )
    kernel = await make_kernel(plugins={"observer": observer})

    async def respond(message, session_key):
        return "the secret is 42" if message.text == "tell" else "hello"

    gateway = Gateway(kernel, respond, "main")
    task = await _running(gateway, fake_channel)
    await fake_channel.inject("hi", from_owner=True)
    await fake_channel.inject("tell", from_owner=True)
    gateway.stop()
    await task
    assert fake_channel.texts() == ["HELLO"]
    assert seen[0] == ("start", ("fake",))
    assert ("received", "hi", "agent:main:main") in seen and ("received", "tell", "agent:main:main") in seen
    assert seen[-1] == ("stop", ("fake",))


def _fields(message: OutboundMessage) -> dict:
    import attrs

    return attrs.asdict(message, recurse=False)


async def test_disabled_channel_does_not_run(make_kernel) -> None:
    import attrs
    from clawbot import ConfigSection

    @attrs.frozen
    class FakeChannelConfig:
        enabled: bool = False

    channel = FakeChannel()
    plugin = plugin_from_hooks(
        clawbot_config_schema=lambda: ConfigSection("channels.fake", FakeChannelConfig),
        clawbot_channels=lambda ctx: [channel],
    )
    kernel = await make_kernel(plugins={"fakes": plugin})
    assert enabled_channels(kernel) == []
    kernel = await make_kernel(plugins={"fakes": plugin}, config="[channels.fake]\nenabled = true\n")
    assert [c.name for c in enabled_channels(kernel)] == ["fake"]


async def test_stop_cancels_the_running_turn_records_it_and_the_session_goes_on(make_kernel, fake_channel) -> None:
    from clawbot.agent.conversation import Conversation
    from clawbot.agent.models import ModelChoice

    from ..agent.scripted import ScriptedProvider

    kernel = await make_kernel()
    provider = ScriptedProvider("slow answer", delay=0.5)
    conversation = Conversation(kernel, ModelChoice(provider, "m"), "main", services=None)

    async def respond(message, session_key):
        return (await conversation.send(session_key, message.text)).text

    gateway = Gateway(kernel, respond, "main")
    task = await _running(gateway, fake_channel)
    await fake_channel.inject("think hard", wait=False, from_owner=True)
    while not provider.requests:
        await asyncio.sleep(0.01)
    await fake_channel.inject("/stop", from_owner=True)
    provider.delay, provider.replies = 0, ["second answer"]  # the cancelled call never got its reply
    await fake_channel.inject("hello again", from_owner=True)
    await fake_channel.inject("/stop", from_owner=True)
    gateway.stop()
    await task
    assert fake_channel.texts() == ["Stopped.", "second answer", "Nothing is running."]
    loaded = kernel.sessions.open("agent:main:main").transcript.load()
    assert any(e.type == "custom" and e.data.get("kind") == "aborted" for e in loaded.entries)
    assert [m.text for m in loaded.messages()] == ["think hard", "hello again", "second answer"]
