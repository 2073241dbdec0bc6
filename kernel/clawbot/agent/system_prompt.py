"""Building one session's system prompt from plugins' pieces.

The kernel decides the *inputs* — prompt mode (by session kind), the bootstrap files (the
``clawbot_bootstrap_files`` hook, then the size caps), the skills the agent may see, the
policy-filtered tools, time zone and runtime facts — and hands them to every
``clawbot_prompt_sections`` implementation in one :class:`PromptContext`. It then only sorts
and joins: the identity line and the stable sections before the provider's cache boundary,
the volatile ones after it. Nothing that changes from turn to turn (the clock, message ids,
the sender) is an input, so a session's prompt is byte-identical across its turns until a
workspace file, a skill or the configuration changes.
"""

from __future__ import annotations

import asyncio
import functools
import os
import platform
from collections.abc import Mapping
from pathlib import Path

import attrs

from clawbot.agent.bootstrap import load_injected_files
from clawbot.agent.clock import user_timezone
from clawbot.agent.prompt import collect_sections
from clawbot.config.automation_schema import heartbeat_minutes
from clawbot.kernel import Kernel
from clawbot.sessions.keys import session_kind
from clawbot.types import (
    InjectedFile,
    PromptContext,
    PromptMode,
    PromptSection,
    RuntimeInfo,
    SessionKind,
    SkillEntry,
    SystemPrompt,
    Tool,
)

IDENTITY_LINE = "You are a personal assistant running inside clawbot."


@attrs.frozen
class PromptRequest:
    """What the conversation knows about the run a prompt is for."""

    agent_id: str
    session_key: str
    workspace: Path
    tools: Mapping[str, Tool]
    model: str | None = None
    channel: str | None = None
    thinking: str = "off"
    reasoning_tags: bool = False


@attrs.frozen
class BuiltPrompt:
    system: SystemPrompt
    context: PromptContext
    sections: tuple[PromptSection, ...]


def prompt_mode_for(kernel: Kernel, kind: SessionKind) -> PromptMode:
    configured = kernel.config.agents.defaults.prompt_mode
    if configured != "auto":
        return configured
    return "minimal" if kind == "subagent" else "full"


@functools.cache
def runtime_info() -> RuntimeInfo:
    """Facts that hold for the life of the process (cached: ``platform`` calls are slow)."""
    shell = os.path.basename(os.environ.get("SHELL", "")) or ""
    return RuntimeInfo(
        host=platform.node() or "unknown",
        os=f"{platform.system()} ({platform.machine()})",
        python=platform.python_version(),
        shell=shell,
    )


def _channel_capabilities(kernel: Kernel, channel: str | None) -> tuple[str, ...]:
    found = kernel.channels.get(channel) if channel else None
    return found.capabilities.names() if found is not None else ()


def _heartbeat_prompt(kernel: Kernel, agent_id: str) -> str:
    """The heartbeat poll's text where the agent's heartbeats run (the automation plugin runs them)."""
    return kernel.config.agents.defaults.heartbeat.prompt if heartbeat_minutes(kernel.config, agent_id) > 0 else ""


async def build_system_prompt(kernel: Kernel, request: PromptRequest) -> BuiltPrompt:
    kind = session_kind(request.session_key)
    mode = prompt_mode_for(kernel, kind)
    files: tuple[InjectedFile, ...] = ()
    skills: tuple[SkillEntry, ...] = ()
    # The workspace's files are read in a worker thread: a slow or hostile file (one the
    # agent replaced with a FIFO) stalls this prompt at worst, never every other chat.
    if mode != "none":
        context = kernel.bootstrap_context(request.agent_id, request.workspace, kind)
        files = await asyncio.to_thread(load_injected_files, kernel, context)
    if mode == "full":
        skills = await asyncio.to_thread(kernel.skill_catalog.prompt_skills, request.agent_id)
    ctx = PromptContext(
        agent_id=request.agent_id,
        mode=mode,
        session_key=request.session_key,
        workspace=request.workspace,
        tools=tuple(request.tools.values()),
        channel=request.channel,
        model=request.model,
        clawbot=kernel.settings,
        session_kind=kind,
        bootstrap_files=files,
        skills=skills,
        timezone=user_timezone(kernel.config.agents.defaults.timezone)[1],
        thinking=request.thinking,
        capabilities=_channel_capabilities(kernel, request.channel),
        runtime=runtime_info(),
        reasoning_tags=request.reasoning_tags,
        heartbeat_prompt=_heartbeat_prompt(kernel, request.agent_id),
        plugin_states=kernel.plugin_states,
    )
    sections = tuple(await collect_sections(kernel, ctx)) if mode != "none" else ()
    stable = "\n\n".join([IDENTITY_LINE, *(s.text for s in sections if s.stable)])
    volatile = "\n\n".join(s.text for s in sections if not s.stable)
    return BuiltPrompt(SystemPrompt(stable, volatile), ctx, sections)
