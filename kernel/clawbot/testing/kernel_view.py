"""What a plugin test sees of a kernel: :class:`TestKernel`.

A plugin's tests check what the plugin registered, the settings it reads, the failures the
kernel recorded for it, and how it behaves in a real turn or behind a real gateway. They
never hold the kernel itself: its parts change from release to release, this view does not.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from pathlib import Path
from types import TracebackType
from typing import Any

from clawbot.agent.bootstrap import load_injected_files
from clawbot.agent.conversation import Conversation
from clawbot.agent.models import ModelChoice
from clawbot.agent.prompt import collect_sections
from clawbot.gateway.runner import enabled_channels
from clawbot.kernel import Kernel
from clawbot.plugins import HookFailure
from clawbot.plugins.records import Contribution
from clawbot.registry import Registry
from clawbot.testing.agents import TestAgents
from clawbot.testing.gateways import Responder, TestGateway
from clawbot.testing.turns import TestConversation, TurnReply
from clawbot.types import (
    BootstrapContext,
    Capability,
    Channel,
    ChatCommand,
    CompactionStrategy,
    InjectedFile,
    LLMProvider,
    MemoryProvider,
    PluginContext,
    PromptContext,
    PromptSection,
    Service,
    SessionKind,
    Settings,
    SkillSource,
    Tool,
    ToolCallDecision,
    ToolCallEvent,
)

DEFAULT_SESSION = "agent:main:main"


async def _no_wait(_seconds: float) -> None:
    return None


class TestKernel:
    """A fresh kernel built for one test (:func:`~clawbot.testing.build_kernel`, ``make_kernel``).

    The registries (``tools``, ``channels``, ``llm_providers`` ...) map names to what the
    plugins registered: ``kernel.tools["exec"]``, ``kernel.tools.names()``,
    ``kernel.tools.plugin_of("exec")``. Close it with :meth:`aclose` (or ``async with``).
    """

    __test__ = False  # a helper, not a test class for pytest to collect

    def __init__(self, kernel: Kernel) -> None:
        self._kernel = kernel

    # ------------------------------------------------------------------ what the plugins registered

    @property
    def tools(self) -> Registry[Tool]:
        return self._kernel.tools

    @property
    def channels(self) -> Registry[Channel]:
        return self._kernel.channels

    @property
    def llm_providers(self) -> Registry[LLMProvider]:
        return self._kernel.llm_providers

    @property
    def memory_providers(self) -> Registry[MemoryProvider]:
        return self._kernel.memory_providers

    @property
    def compaction_strategies(self) -> Registry[CompactionStrategy]:
        return self._kernel.compaction_strategies

    @property
    def skill_sources(self) -> Registry[SkillSource]:
        return self._kernel.skill_sources

    @property
    def chat_commands(self) -> Registry[ChatCommand]:
        return self._kernel.chat_commands

    @property
    def services(self) -> Registry[Service]:
        """The background services the plugins gave a gateway (``clawbot_services``), by name."""
        return self._kernel.services

    @property
    def capabilities(self) -> Registry[Capability]:
        """The capabilities the plugins provide to tools (``clawbot_capabilities``), by kind name."""
        return self._kernel.capabilities

    @property
    def memory_provider(self) -> MemoryProvider | None:
        """The memory in use (``[memory] provider``; ``None``: none installed)."""
        return self._kernel.memory_provider

    @property
    def compaction_strategy(self) -> CompactionStrategy | None:
        """The compaction strategy in use (``None``: none installed)."""
        return self._kernel.compaction_strategy

    def enabled_channels(self) -> list[Channel]:
        """The channels a gateway of this kernel would start (those not ``enabled = false``)."""
        return enabled_channels(self._kernel)

    @property
    def plugin_failures(self) -> list[HookFailure]:
        """Every hook call that raised or returned the wrong kind of object, by plugin."""
        return self._kernel.plugins.failures

    # ------------------------------------------------------------------ settings and state

    @property
    def config(self) -> Any:
        """The loaded configuration; a plugin's own table: ``kernel.config.section("plugins.<name>")``."""
        return self._kernel.config

    @property
    def settings(self) -> Settings:
        """The read-only settings view hooks see as ``ctx.clawbot``."""
        return self._kernel.settings

    def bootstrap_context(self, agent_id: str, workspace: Path, kind: SessionKind = "main") -> BootstrapContext:
        """What ``clawbot_bootstrap_files`` receives for a session of ``kind`` of ``agent_id``."""
        return self._kernel.bootstrap_context(agent_id, workspace, kind)

    @property
    def state_dir(self) -> Path:
        """Where this kernel keeps its state (``ctx.state_dir``; ``CLAWBOT_HOME``)."""
        return self._kernel.paths.root

    @property
    def env(self) -> Mapping[str, str]:
        return self._kernel.env

    def plugin_context(self, plugin: str) -> PluginContext:
        """The ``ctx`` the kernel passes plugin ``plugin``'s hooks."""
        return self._kernel.plugin_context(plugin)

    # ------------------------------------------------------------------ calling hooks

    async def collect(self, hook: str, **kwargs: Any) -> list[Contribution]:
        """Call a hook that collects from every plugin, as the kernel does: one ``Contribution``
        (``.plugin``, ``.value``) per item returned. Without arguments each plugin gets its own
        ``ctx`` (the parameter of the hooks that register things)."""
        if kwargs:
            return await self._kernel.plugins.collect(hook, **kwargs)
        return await self._kernel.plugins.collect(hook, lambda name: {"ctx": self._kernel.plugin_context(name)})

    async def before_tool_call(self, event: ToolCallEvent) -> ToolCallDecision:
        """What the ``clawbot_before_tool_call`` chain decides for ``event`` (block, rewrite, allow)."""
        decision: ToolCallDecision = await self._kernel.plugins.before_tool_call(event)
        return decision

    # ------------------------------------------------------------------ what a prompt is built from

    def bootstrap_files(self, ctx: BootstrapContext) -> tuple[InjectedFile, ...]:
        """The workspace files a run described by ``ctx`` injects into the prompt: what the
        ``clawbot_bootstrap_files`` hooks returned, checked and capped as the kernel does
        (``.name``, ``.path``, ``.content``: the text, a ``promptkit.NotLoaded`` note or
        ``None`` for a missing file; ``.truncated``)."""
        return load_injected_files(self._kernel, ctx)

    async def prompt_sections(self, ctx: PromptContext) -> list[PromptSection]:
        """The system prompt's sections for ``ctx``, in the order the prompt has them."""
        return await collect_sections(self._kernel, ctx)

    # ------------------------------------------------------------------ running it

    def conversation(
        self,
        provider: LLMProvider,
        *,
        model: str = "test-model",
        agent_id: str = "main",
        clock: Callable[[], datetime] | None = None,
        backoff: bool = True,
    ) -> TestConversation:
        """Agent ``agent_id`` answering with ``provider`` (the fake LLM behind a provider plugin,
        or a scripted ``LLMProvider``): real turns, with this kernel's tools and hooks.
        ``clock``: what time the turns think it is (the user's date, the daily reset);
        ``backoff=False``: a failed model call is retried at once, not after a wait."""
        conversation = Conversation(self._kernel, ModelChoice(provider, model), agent_id, services=None, caller_sleep=None if backoff else _no_wait)
        if clock is not None:
            conversation.clock = clock
        return TestConversation(conversation)

    async def run_turn(
        self, provider: LLMProvider, text: str, *, model: str = "test-model", agent_id: str = "main", session_key: str = DEFAULT_SESSION
    ) -> TurnReply:
        """One turn of ``agent_id`` in ``session_key`` answering ``text`` with ``provider``."""
        return await self.conversation(provider, model=model, agent_id=agent_id).send(session_key, text)

    def gateway(self, respond: Responder, *, agent_id: str = "main") -> TestGateway:
        """A gateway of this kernel whose every turn is ``await respond(message, session_key)``."""
        return TestGateway.plain(self._kernel, respond, agent_id)

    def agents(self, *, chat: Any = None) -> TestAgents:
        """The agents of this kernel as a running clawbot has them: approvals, system events,
        the tool services of a turn. ``chat`` stands in for the gateway while none runs (see
        :class:`~clawbot.testing.TestAgents`)."""
        return TestAgents(self._kernel, chat)

    async def aclose(self) -> None:
        """Close what the plugins opened (clients, connections, child processes)."""
        await self._kernel.aclose()

    async def __aenter__(self) -> TestKernel:
        return self

    async def __aexit__(self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None) -> None:
        await self.aclose()
