"""Tool policy: which registered tools an agent's model may see and call.

A profile gives the base set (``minimal``, ``coding``, ``messaging``, ``full``): ``full``
is every tool, the others the tools that list the profile in their ``profiles``; a
non-empty ``allow`` narrows it to the patterns listed; ``deny`` removes and always wins.
A pattern is a tool name, a name with ``*`` wildcards (``sessions_*``, ``*``) or
``group:<group>`` (a tool's ``group``); matching ignores case, so ``deny = ["Exec"]`` still
denies ``exec``. Profiles, groups and order are the tools' own data: the kernel names no
tool. An agent's own ``tools`` table overrides only what it sets: a table with just
``allow`` keeps the global profile, one with just ``deny`` keeps the global profile and
allow list, and the global deny list always applies. The model is only ever sent the
allowed tools, and a call to any other is "unknown".

Before the policy, :func:`agent_tools` leaves out the tools whose engine is missing: a tool
that ``needs_memory`` works through the active memory provider, so with none installed it
is not offered at all (the prompt's Memory Recall section follows them).
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable
from typing import TYPE_CHECKING

import attrs

from clawbot.agent.tool_order import ordered_tools
from clawbot.config.schema import AgentToolPolicyConfig, ClawbotConfig, ToolPolicyConfig
from clawbot.types import Tool

if TYPE_CHECKING:
    from clawbot.kernel import Kernel

GROUP_PREFIX = "group:"
EVERY_TOOL = "full"


@attrs.frozen
class EffectivePolicy:
    profile: str
    allow: tuple[str, ...]
    deny: tuple[str, ...]


def matches(tool: Tool, pattern: str) -> bool:
    pattern = pattern.strip().lower()
    if pattern.startswith(GROUP_PREFIX):
        return (tool.group or "").lower() == pattern.removeprefix(GROUP_PREFIX)
    return fnmatch.fnmatchcase(tool.name.lower(), pattern)


def in_profile(tool: Tool, profile: str) -> bool:
    """Whether ``profile`` offers ``tool``: ``full`` offers every tool, the others those
    that list it."""
    return profile == EVERY_TOOL or profile in tool.profiles


def _any(tool: Tool, patterns: Iterable[str]) -> bool:
    return any(matches(tool, p) for p in patterns)


def effective_policy(config: ClawbotConfig, agent_id: str) -> EffectivePolicy:
    base = config.tools
    agent = config.agent(agent_id)
    own = agent.tools if agent is not None else None
    if own is None:
        return EffectivePolicy(base.profile, tuple(base.allow), tuple(base.deny))
    return EffectivePolicy(
        own.profile if own.profile is not None else base.profile,
        tuple(own.allow if own.allow is not None else base.allow),
        (*base.deny, *own.deny),
    )


def allowed_tools(tools: Iterable[Tool], config: ClawbotConfig, agent_id: str) -> dict[str, Tool]:
    """The tools ``agent_id`` may use, by name, in the display order (by each tool's ``order``)."""
    policy = effective_policy(config, agent_id)
    chosen = {}
    for tool in ordered_tools(tools):
        if not in_profile(tool, policy.profile):
            continue
        if policy.allow and not _any(tool, policy.allow):
            continue
        if _any(tool, policy.deny):
            continue
        chosen[tool.name] = tool
    return chosen


def usable_tools(kernel: Kernel) -> list[Tool]:
    """The registered tools whose engine is there: a tool that ``needs_memory`` only passes
    calls on to the active memory provider, so it waits for one."""
    memory = kernel.memory_provider is not None
    return [t for t in kernel.tools if memory or not t.needs_memory]


def agent_tools(kernel: Kernel, agent_id: str) -> dict[str, Tool]:
    """What ``agent_id``'s model is offered: the usable tools its policy allows."""
    return allowed_tools(usable_tools(kernel), kernel.config, agent_id)


def unknown_patterns(tools: Iterable[Tool], config: ClawbotConfig) -> list[str]:
    """Policy entries that match no registered tool: usually a typo (``exce``) or a plugin
    that is not installed (a group exists while a tool in it is installed). Reported by
    ``clawbot doctor`` and logged at start; never fatal, because a deny entry for an absent tool is harmless and an allow entry denies nothing."""
    tools = list(tools)
    found = []
    tables: list[tuple[str, ToolPolicyConfig | AgentToolPolicyConfig]] = [("tools", config.tools)]
    tables += [(f"agents.list[{i}].tools", a.tools) for i, a in enumerate(config.agents.list) if a.tools is not None]
    for path, table in tables:
        for key in ("allow", "deny"):
            for index, pattern in enumerate(getattr(table, key) or ()):
                if not any(matches(t, pattern) for t in tools):
                    found.append(f"{path}.{key}[{index}]: {pattern!r} matches no installed tool")
    return found
