"""Small, real implementations of the kernel's interfaces and plugin builders for hook tests."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from clawbot import hookimpl
from clawbot.types import (
    AgentHost,
    Channel,
    ChatCommand,
    CompactionRequest,
    CompactionResult,
    CompactionStrategy,
    LLMProvider,
    MemoryExcerpt,
    MemoryPathError,
    MemoryProvider,
    MemorySearch,
    MemoryStatus,
    MemorySyncReport,
    Message,
    ModelRequest,
    OutboundMessage,
    ProviderError,
    Service,
    SkillSource,
    TextSink,
    Tool,
    ToolResult,
)


class NamedChannel(Channel):
    def __init__(self, name: str) -> None:
        self.name = name
        self.sent: list[OutboundMessage] = []

    async def start(self, sink: Any) -> None:
        return None

    async def send(self, message: OutboundMessage) -> None:
        self.sent.append(message)


class EchoProvider(LLMProvider):
    def __init__(self, name: str) -> None:
        self.name = name

    async def complete(self, request: ModelRequest, on_text: TextSink | None = None) -> Message:
        return Message.assistant(request.messages[-1].text if request.messages else "")


class ListMemory(MemoryProvider):
    def __init__(self, name: str) -> None:
        self.name = name

    async def search(self, query: str, *, agent_id: str, max_results: int | None = None, min_score: float | None = None) -> MemorySearch:
        return MemorySearch(hits=(), mode="keyword")

    async def get(self, path: str, *, agent_id: str, from_line: int = 1, lines: int | None = None) -> MemoryExcerpt:
        raise MemoryPathError(f"{path} is not a memory file")

    async def sync(self, *, agent_id: str, force: bool = False, progress=None) -> MemorySyncReport:  # noqa: ANN001
        return MemorySyncReport()

    async def status(self, *, agent_id: str) -> MemoryStatus:
        return MemoryStatus(provider=self.name, agent_id=agent_id, mode="keyword")


class DropAllCompaction(CompactionStrategy):
    def __init__(self, name: str) -> None:
        self.name = name

    async def compact(self, request: CompactionRequest) -> CompactionResult:
        return CompactionResult("nothing", len(request.messages), 0, 0)


def make_tool(name: str) -> Tool:
    return Tool(name=name, description=f"{name} tool", parameters={"type": "object"}, handler=lambda call: ToolResult.text("ok"))


def make_chat_command(name: str) -> ChatCommand:
    return ChatCommand(name=name, description=f"/{name}", handler=lambda ctx: f"{name}:{ctx.args}")


def make_skill_source(name: str) -> SkillSource:
    return SkillSource(name=name, path=Path("/nonexistent") / name, precedence=1)


class IdleService(Service):
    """A background service that waits until the gateway stops it."""

    def __init__(self, name: str) -> None:
        self.name = name

    async def run(self, host: AgentHost) -> None:
        await asyncio.Event().wait()


# hook -> (kernel registry attribute, factory making one contribution by name)
REGISTRATION: dict[str, tuple[str, Callable[[str], Any]]] = {
    "clawbot_channels": ("channels", NamedChannel),
    "clawbot_llm_providers": ("llm_providers", EchoProvider),
    "clawbot_memory_providers": ("memory_providers", ListMemory),
    "clawbot_compaction_strategies": ("compaction_strategies", DropAllCompaction),
    "clawbot_skill_sources": ("skill_sources", make_skill_source),
    "clawbot_tools": ("tools", make_tool),
    "clawbot_chat_commands": ("chat_commands", make_chat_command),
    "clawbot_services": ("services", IdleService),
}


def plugin(**hooks: Callable[..., Any]) -> object:
    """A plugin object; plain functions get ``@hookimpl``, already marked ones keep their options."""
    return SimpleNamespace(**{name: fn if hasattr(fn, "clawbot_impl") else hookimpl(fn) for name, fn in hooks.items()})


def recorder(seen: list, label: str, *, is_async: bool = False) -> Callable[..., Any]:
    """A notification implementation that appends ``(label, event)`` to ``seen``."""
    if is_async:

        async def record_async(event: Any) -> None:
            await asyncio.sleep(0)
            seen.append((label, event))

        return record_async

    def record(event: Any) -> None:
        seen.append((label, event))

    return record


def raiser(message: str) -> Callable[..., Any]:
    def fail(event: Any) -> None:
        raise RuntimeError(message)

    return fail


class OverflowingProvider(LLMProvider):
    """Answers "reply <n>" to its n-th request, except that the next ``overflow`` requests
    fail as too long for the context window (set it before the turn that should compact)."""

    name = "p"

    def __init__(self) -> None:
        self.overflow = 0
        self.requests: list[ModelRequest] = []

    async def complete(self, request: ModelRequest, on_text: TextSink | None = None) -> Message:
        self.requests.append(request)
        if self.overflow:
            self.overflow -= 1
            raise ProviderError("context_overflow", "too long", status=400)
        return Message.assistant(f"reply {len(self.requests)}")


class AskTheModel(CompactionStrategy):
    """Keeps the last ``keep`` messages; the model summarises the rest through the kernel's
    ``summarize``, told the user's instructions. Remembers every request it got."""

    SYSTEM = "Summarise the conversation."

    def __init__(self, name: str = "ask-model", keep: int = 1) -> None:
        self.name = name
        self.keep = keep
        self.requests: list[CompactionRequest] = []

    async def compact(self, request: CompactionRequest) -> CompactionResult:
        from clawbot.tokens import estimate_tokens

        self.requests.append(request)
        assert request.summarize is not None
        cut = len(request.messages) - self.keep
        focus = f"Focus: {request.instructions}\n" if request.instructions else ""
        summary = await request.summarize(self.SYSTEM, focus + "\n".join(m.text for m in request.messages[:cut]))
        before = estimate_tokens(sum(len(m.text) for m in request.messages))
        after = estimate_tokens(len(summary) + sum(len(m.text) for m in request.messages[cut:]))
        return CompactionResult(summary, cut, before, after)


class Misbehaving(CompactionStrategy):
    """A strategy whose result the kernel must not store: it raises, or its summary is empty
    or blank, or its first kept index lies outside the history."""

    BEHAVIOURS = ("raises", "empty", "blank", "index-past-the-end", "negative-index")

    def __init__(self, behaviour: str) -> None:
        self.name = "misbehaving"
        self.behaviour = behaviour
        self.calls = 0

    async def compact(self, request: CompactionRequest) -> CompactionResult:
        self.calls += 1
        size = len(request.messages)
        if self.behaviour == "raises":
            raise RuntimeError("the strategy broke")
        summary = {"empty": "", "blank": " \n\t"}.get(self.behaviour, "a summary")
        index = {"index-past-the-end": size + 1, "negative-index": -1}.get(self.behaviour, size - 1)
        return CompactionResult(summary, index, 100, 10)
