"""``/subagents``: the sub-agents this session started and how they stand; ``/subagents stop
<id>`` stops one (the owner only: it ends work the owner's session asked for)."""

from __future__ import annotations

from clawbot import ChatCommand, ChatCommandContext

from clawbot_subagents.runs import SubagentRegistry
from clawbot_subagents.text import quoted_line

USAGE = "Usage: /subagents lists this session's sub-agents; /subagents stop <id> stops one."
DESCRIPTION = "the sub-agents this session started and how they stand; /subagents stop <id> stops one (owner only)"


def subagents_text(registry: SubagentRegistry, session_key: str, args: str, *, owner: bool) -> str:
    words = args.split()
    if words and words[0].lower() == "stop":
        if not owner:
            return "Only the owner can stop sub-agents."
        if len(words) != 2:
            return USAGE
        return registry.stop(session_key, words[1])
    if words:
        return USAGE
    runs = registry.of_parent(session_key)
    if not runs:
        return "This session has started no sub-agents since clawbot started."
    lines = [f"{len(runs)} sub-agent(s), newest first:"]
    for run in runs:
        task = " ".join(run.task.split())
        task = task if len(task) <= 80 else task[:79] + "\u2026"
        lines.append(f"- {run.run_id} [{run.status}] agent {quoted_line(run.agent_id)}, started {run.started_at}: {quoted_line(task)}")
    return "\n".join(lines)


def subagents_command(registry: SubagentRegistry) -> ChatCommand:
    def handler(ctx: ChatCommandContext) -> str:
        return subagents_text(registry, ctx.session_key, ctx.args, owner=ctx.owner)

    return ChatCommand("subagents", DESCRIPTION, handler)
