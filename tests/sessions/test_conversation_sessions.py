"""A conversation keeps its history in the session transcript."""

from __future__ import annotations

import asyncio

from clawbot import LLMProvider, Message, ModelRequest, Usage
from clawbot.agent.conversation import Conversation
from clawbot.agent.models import ModelChoice
from clawbot.testing import plugin_from_hooks


class RecordingProvider(LLMProvider):
    name = "rec"

    def __init__(self, delay: float = 0.0) -> None:
        self.requests: list[ModelRequest] = []
        self.delay = delay
        self.active = 0
        self.max_active = 0

    async def complete(self, request, on_text=None):
        self.requests.append(request)
        self.active += 1
        self.max_active = max(self.max_active, self.active)
        await asyncio.sleep(self.delay)
        self.active -= 1
        text = f"reply {len(self.requests)}"
        if on_text:
            await on_text(text)
        return Message(Message.assistant(text).role, Message.assistant(text).content, usage=Usage(7, 3, 2, 0), model="m1", provider="rec")


async def test_history_persists_across_conversations_and_usage_is_totalled(make_kernel) -> None:
    started = []
    hooks = plugin_from_hooks(clawbot_session_start=lambda event: started.append(event.session_key))
    kernel = await make_kernel(plugins={"hooks": hooks})
    provider = RecordingProvider()
    first = Conversation(kernel, ModelChoice(provider, "m1"), "main", services=None)
    result = await first.send("agent:main:main", "hello")
    assert result.text == "reply 1" and result.usage == Usage(7, 3, 2, 0)

    second = Conversation(kernel, ModelChoice(provider, "m1"), "main", services=None)  # e.g. the next `clawbot agent`
    await second.send("agent:main:main", "again")
    assert [m.text for m in provider.requests[1].messages] == ["hello", "reply 1", "again"]
    assert started == ["agent:main:main"]
    info = kernel.sessions.get("agent:main:main")
    assert info.turns == 2 and info.usage == Usage(14, 6, 4, 0) and info.model == "rec/m1"


async def test_one_session_runs_one_turn_at_a_time_while_others_run_concurrently(make_kernel) -> None:
    kernel = await make_kernel()
    same = RecordingProvider(delay=0.05)
    conversation = Conversation(kernel, ModelChoice(same, "m1"), "main", services=None)
    await asyncio.gather(*(conversation.send("agent:main:main", f"m{i}") for i in range(3)))
    assert same.max_active == 1
    history = kernel.sessions.open("agent:main:main").transcript.load().messages()
    assert len(history) == 6

    parallel = RecordingProvider(delay=0.05)
    conversation = Conversation(kernel, ModelChoice(parallel, "m1"), "main", services=None)
    await asyncio.gather(*(conversation.send(f"agent:main:x:group:{i}", "hi") for i in range(3)))
    assert parallel.max_active == 3
