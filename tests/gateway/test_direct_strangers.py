"""A stranger in a direct chat: the gateway asks the plugins (``clawbot_direct_stranger``) and
does what the first answer says; with no answer, or a plugin that fails, the stranger is
refused silently and the channel keeps running.

Real gateway and fake channel on the real channels' default rules (``dm_policy = "pairing"``);
the answering plugins are plain functions.
"""

from __future__ import annotations

import asyncio

import pytest
from clawbot.gateway.runner import Gateway
from clawbot.testing import FakeChannel, plugin_from_hooks
from clawbot.types import ChannelConfig, PluginContext, StrangerAnswer, StrangerEvent


async def _echo(message, session_key):  # noqa: ANN001, ANN202
    return f"agent: {message.text}"


async def _talk(make_kernel, channel: FakeChannel, plugins: dict, *messages: tuple[str, dict]):  # noqa: ANN202
    kernel = await make_kernel(plugins={channel.name: channel.as_plugin(), **plugins})
    gateway = Gateway(kernel, _echo, "main")
    task = asyncio.create_task(gateway.run([channel]))
    for text, fields in messages:
        await channel.inject(text, **fields)
    gateway.stop()
    await task
    await kernel.aclose()
    return kernel


@pytest.mark.hook_emission("clawbot_direct_stranger")
async def test_hook_direct_stranger_is_asked_by_the_gateway_which_sends_its_reply(make_kernel, clawbot_home) -> None:
    seen: list[tuple[str, StrangerEvent]] = []

    def clawbot_direct_stranger(ctx: PluginContext, event: StrangerEvent) -> StrangerAnswer:
        seen.append((str(ctx.state_dir), event))
        if event.sender_id == "carol":
            return StrangerAnswer.admit("known")
        return StrangerAnswer.refuse("unknown", "Ask my owner about me.")

    channel = FakeChannel("chat", access=ChannelConfig())
    doorman = plugin_from_hooks(clawbot_direct_stranger=clawbot_direct_stranger)
    await _talk(
        make_kernel,
        channel,
        {"doorman": doorman},
        ("hi", {"peer_id": "bob", "sender_name": "Bob", "account_id": "bot-2"}),
        ("hello", {"peer_id": "carol"}),
        ("me", {"peer_id": "alice", "from_owner": True}),  # the owner: nobody is asked
    )
    assert channel.texts() == ["Ask my owner about me.", "agent: hello", "agent: me"]
    assert channel.sent[0].notice  # clawbot's own words, not the agent's
    (state_dir, event), _ = seen
    assert state_dir == str(clawbot_home) and (event.channel, event.sender_id, event.ask) == ("chat", "bob", True)
    assert (event.message.text, event.message.sender_name, event.message.account_id) == ("hi", "Bob", "bot-2")
    assert [e.sender_id for _, e in seen] == ["bob", "carol"]


async def test_hook_direct_stranger_only_looks_on_allowlist_and_nothing_is_sent(make_kernel) -> None:
    seen: list[StrangerEvent] = []

    def clawbot_direct_stranger(event: StrangerEvent) -> StrangerAnswer:
        seen.append(event)
        return StrangerAnswer.admit("known") if event.sender_id == "carol" else StrangerAnswer.refuse("unknown", "never sent")

    channel = FakeChannel("chat", access=ChannelConfig(dm_policy="allowlist"))
    doorman = plugin_from_hooks(clawbot_direct_stranger=clawbot_direct_stranger)
    await _talk(make_kernel, channel, {"doorman": doorman}, ("hi", {"peer_id": "bob"}), ("hello", {"peer_id": "carol"}))
    assert channel.texts() == ["agent: hello"]
    assert [(e.sender_id, e.ask) for e in seen] == [("bob", False), ("carol", False)]


async def test_hook_direct_stranger_unanswered_refuses_the_stranger_silently(make_kernel) -> None:
    channel = FakeChannel("chat", access=ChannelConfig())
    await _talk(make_kernel, channel, {}, ("hi", {"peer_id": "bob"}), ("me", {"peer_id": "alice", "from_owner": True}))
    assert channel.texts() == ["agent: me"]


@pytest.mark.parametrize("failure", ["raises", "answers nonsense"])
async def test_hook_direct_stranger_failing_refuses_and_the_channel_keeps_running(make_kernel, failure) -> None:
    def broken(event: StrangerEvent) -> object:
        if failure == "raises":
            raise OSError("the state dir is read-only")
        return "yes, let them in"

    def lenient(event: StrangerEvent) -> StrangerAnswer:
        return StrangerAnswer.admit("everyone")  # never reached: the failure refuses first

    channel = FakeChannel("chat", access=ChannelConfig())
    plugins = {"lenient": plugin_from_hooks(clawbot_direct_stranger=lenient), "broken": plugin_from_hooks(clawbot_direct_stranger=broken)}
    kernel = await _talk(make_kernel, channel, plugins, ("hi", {"peer_id": "bob"}), ("me", {"peer_id": "alice", "from_owner": True}))
    assert channel.texts() == ["agent: me"]
    [recorded] = kernel.plugins.failures
    assert (recorded.plugin, recorded.hook) == ("broken", "clawbot_direct_stranger")
    assert ("OSError: the state dir is read-only" if failure == "raises" else "expected a StrangerAnswer") in recorded.error
