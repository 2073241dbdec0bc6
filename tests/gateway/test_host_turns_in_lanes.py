"""A plugin's turn (``AgentHost.run_turn``) runs in the gateway's lane of its session, like a
chat message: counted as running, shown in status, queued behind a running turn of the same
session, and cancelled by the owner's ``/stop``.

Real kernel and gateway, the fake channel, a scripted model that answers only when let go.
"""

from __future__ import annotations

import asyncio

from clawbot.agent.models import ModelChoice
from clawbot.agent.runtime import AgentRuntime
from clawbot.gateway.runner import Gateway
from clawbot.testing import FakeChannel
from clawbot.types import InboundMessage, TurnOutcome

from ..agent.scripted import ScriptedProvider

ALICE = "agent:main:fake:dm:alice"  # alice's direct chat on the fake channel


class HeldProvider(ScriptedProvider):
    """A slow model: each request waits until the test lets it answer."""

    def __init__(self, *replies: str) -> None:
        super().__init__(*replies)
        self.release = asyncio.Event()
        self.asked = asyncio.Event()

    async def complete(self, request, on_text=None):
        self.asked.set()
        await self.release.wait()
        return await super().complete(request, on_text)


async def _until(predicate, timeout: float = 30.0) -> None:
    async with asyncio.timeout(timeout):
        while not predicate():
            await asyncio.sleep(0.005)


async def _running_gateway(make_kernel, provider: ScriptedProvider) -> tuple[Gateway, FakeChannel, asyncio.Task[None]]:
    kernel = await make_kernel()
    runtime = AgentRuntime(kernel)
    await runtime.conversation("main", chain=[ModelChoice(provider, "m")])
    gateway, channel = Gateway(kernel, runtime.respond, "main", runtime=runtime), FakeChannel()
    run = asyncio.create_task(gateway.run([channel]))
    await channel.wait_started()
    return gateway, channel, run


async def test_a_plugins_turn_counts_as_running_and_the_owners_stop_cancels_it(make_kernel) -> None:
    provider = HeldProvider("never said")
    gateway, channel, run = await _running_gateway(make_kernel, provider)
    assert gateway.runtime is not None
    host = gateway.runtime.services.host
    owners_chat = gateway.session_of(channel, InboundMessage(channel="fake", peer_id="alice", text="", from_owner=True))
    turn = asyncio.create_task(host.run_turn("main", owners_chat, "summarise the inbox", kind="cron"))
    await provider.asked.wait()
    assert host.session_busy(owners_chat) and gateway.running_sessions() == [owners_chat]
    await channel.inject("/stop", peer_id="alice", from_owner=True)
    assert await turn == TurnOutcome("", "aborted")
    assert channel.texts() == ["Stopped."]
    assert not host.session_busy(owners_chat)
    gateway.stop()
    await run


async def test_a_plugins_turn_waits_behind_a_running_chat_turn_of_its_session(make_kernel) -> None:
    provider = HeldProvider("hi alice", "the inbox is empty")
    gateway, channel, run = await _running_gateway(make_kernel, provider)
    assert gateway.runtime is not None
    host = gateway.runtime.services.host
    await channel.inject("hello", peer_id="alice", wait=False)
    await provider.asked.wait()
    turn = asyncio.create_task(host.run_turn("main", ALICE, "summarise the inbox", kind="cron"))
    await asyncio.sleep(0)  # let the plugin's turn reach the lane
    assert len(provider.requests) == 0  # the chat's own turn still holds the session (its request waits)
    provider.release.set()
    outcome = await asyncio.wait_for(turn, 30)
    assert outcome == TurnOutcome("the inbox is empty", None)
    await _until(lambda: channel.texts() == ["hi alice"])
    assert [request.messages[-1].text.endswith("summarise the inbox") for request in provider.requests] == [False, True]
    gateway.stop()
    await run
