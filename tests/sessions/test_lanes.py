"""Session lanes: one turn at a time per key, and no lock kept for keys nobody is using."""

from __future__ import annotations

import asyncio
from pathlib import Path

from clawbot import LLMProvider, Message, Usage
from clawbot.agent.conversation import Conversation
from clawbot.agent.models import ModelChoice
from clawbot.sessions.store import SessionStore


class SlowProvider(LLMProvider):
    name = "slow"

    def __init__(self, delay: float = 0.0) -> None:
        self.delay = delay
        self.active: dict[str, int] = {}
        self.overlapped = False

    async def complete(self, request, on_text=None):  # noqa: ANN001, ANN201
        first = request.messages[0].text
        self.active[first] = self.active.get(first, 0) + 1
        self.overlapped |= self.active[first] > 1
        await asyncio.sleep(self.delay)
        self.active[first] -= 1
        reply = Message.assistant("ok")
        return Message(reply.role, reply.content, usage=Usage(1, 1), model="m1", provider="slow")


async def test_no_lane_is_retained_after_turns_on_many_keys(make_kernel) -> None:
    kernel = await make_kernel()
    conversation = Conversation(kernel, ModelChoice(SlowProvider(), "m1"), "main", services=None)
    await asyncio.gather(*(conversation.send(f"agent:main:chat{i:03d}", "hi") for i in range(100)))
    assert kernel.sessions._lanes == {}
    assert len(kernel.sessions.list("main")) == 100


async def test_turns_on_one_key_still_wait_for_each_other(make_kernel) -> None:
    kernel = await make_kernel()
    provider = SlowProvider(delay=0.03)
    conversation = Conversation(kernel, ModelChoice(provider, "m1"), "main", services=None)
    await asyncio.gather(*(conversation.send("agent:main:main", "hi") for _ in range(3)))
    assert not provider.overlapped
    assert kernel.sessions.get("agent:main:main").turns == 3
    assert kernel.sessions._lanes == {}


async def test_a_lane_lives_while_held_or_awaited_and_cancelled_waiters_leave_no_trace(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    order: list[str] = []
    release = asyncio.Event()

    async def hold(name: str) -> None:
        async with store.lane("k"):
            order.append(f"{name} in")
            await release.wait()
            order.append(f"{name} out")

    first = asyncio.create_task(hold("a"))
    second = asyncio.create_task(hold("b"))
    cancelled = asyncio.create_task(hold("c"))
    await asyncio.sleep(0.01)
    assert order == ["a in"] and list(store._lanes) == ["k"]
    cancelled.cancel()
    await asyncio.gather(cancelled, return_exceptions=True)
    release.set()
    await asyncio.gather(first, second)
    assert order == ["a in", "a out", "b in", "b out"]
    assert store._lanes == {}
    async with store.lane("k"):  # usable again afterwards
        assert list(store._lanes) == ["k"]
    assert store._lanes == {}
