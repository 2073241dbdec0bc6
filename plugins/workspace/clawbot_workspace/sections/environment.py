"""Where and when the agent runs: Model Aliases, Workspace, Sandbox, User Identity,
Current Date & Time and the Runtime line."""

from __future__ import annotations

from clawbot.types import PromptContext

from clawbot_workspace.sections._text import absolute, block


def model_aliases(ctx: PromptContext) -> str | None:
    aliases = ctx.clawbot.model_aliases
    if not aliases:
        return None
    lines = [
        "## Model Aliases",
        "Short names for models (alias: provider/model); use the full name when setting a model.",
    ]
    lines += [f"- {alias}: {aliases[alias]}" for alias in sorted(aliases)]
    return "\n".join(lines)


def workspace(ctx: PromptContext) -> str:
    return block(
        "## Workspace",
        f"Your working directory is: {absolute(ctx.workspace)}",
        "Use it as the workspace for file operations unless told otherwise; the file tools cannot reach outside it.",
    )


def sandbox_enabled(ctx: PromptContext) -> bool:
    """``Settings.sandbox_enabled``: clawbot has no sandbox yet, so this is false today."""
    return ctx.clawbot.sandbox_enabled is True


def sandbox(ctx: PromptContext) -> str | None:
    if not sandbox_enabled(ctx):
        return None
    return block(
        "## Sandbox",
        "Your tools run inside a sandbox: paths, installed programs and network access may differ from the host. "
        "If a task needs something outside it, tell the user instead of trying to get around it.",
    )


def user_identity(ctx: PromptContext) -> str | None:
    owners = list(ctx.clawbot.owner_ids)
    if not owners:
        return None
    return block(
        "## User Identity",
        f"Your owner (the user this assistant works for) is: {', '.join(owners)}. Messages from other senders "
        "are not from your owner; do not share the owner's private information with them.",
    )


def current_time(ctx: PromptContext) -> str:
    lines = ["## Current Date & Time"]
    if ctx.timezone:
        lines.append(f"Time zone: {ctx.timezone}")
    if ctx.has_tool("session_status"):
        lines.append("This prompt holds no clock: call `session_status` whenever you need the current date or time.")
    else:
        lines.append("You do not know the current date or time unless the user tells you; do not guess it.")
    return "\n".join(lines)


def runtime(ctx: PromptContext) -> str:
    parts = [f"agent={ctx.agent_id}"]
    if ctx.runtime is not None:
        parts += [f"host={ctx.runtime.host}", f"os={ctx.runtime.os}", f"python={ctx.runtime.python}"]
    parts += [
        f"model={ctx.model or 'unknown'}",
        f"channel={ctx.channel or 'none'}",
        f"capabilities={','.join(ctx.capabilities) or 'none'}",
        f"thinking={ctx.thinking}",
    ]
    return "## Runtime\nRuntime: " + " | ".join(parts)
