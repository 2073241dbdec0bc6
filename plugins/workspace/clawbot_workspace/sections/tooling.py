"""Tooling, Tool Call Style and Execution Bias: what the model can call and how to use it."""

from __future__ import annotations

from clawbot.promptkit import ordered_tools
from clawbot.types import PromptContext, Tool

from clawbot_workspace.sections._text import block

SUMMARY_MAX_CHARS = 160


def tool_summary(tool: Tool) -> str:
    """The tool's ``summary``, else the first sentence of its description's first line."""
    text = " ".join(tool.summary.split())
    if not text:
        lines = [line for line in tool.description.splitlines() if line.strip()]
        text = " ".join(lines[0].split()) if lines else ""
        sentence, dot, _ = text.partition(". ")
        text = sentence if dot else text.removesuffix(".")
    if len(text) > SUMMARY_MAX_CHARS:
        text = text[: SUMMARY_MAX_CHARS - 1].rstrip() + "…"
    return text


def tooling(ctx: PromptContext) -> str:
    lines = [
        "## Tooling",
        "Tools available here (already filtered by policy). Names are case-sensitive: call them exactly as listed.",
    ]
    for tool in ordered_tools(ctx.tools):
        summary = tool_summary(tool)
        lines.append(f"- {tool.name}: {summary}" if summary else f"- {tool.name}")
    if not ctx.tools:
        lines.append("(no tools in this session)")
    lines.append("TOOLS.md, if present, is guidance on using tools, not a list of what is available.")
    return "\n".join(lines)


def tool_call_style(ctx: PromptContext) -> str:
    lines = [
        "## Tool Call Style",
        ("Do not narrate routine, low-risk calls. Say briefly what you are doing only for multi-step, sensitive or destructive actions, or when asked to."),
        "If a tool can do the job, use it; do not ask the user to run an equivalent command.",
    ]
    if ctx.has_tool("exec"):
        lines += [
            (
                'Approvals: when `exec` answers "approval-pending", the command has NOT run. Show the user the full '
                "command verbatim (every chained or multi-line part), then, on its own line, the exact "
                '`/approve <id> allow-once` line from "Reply with:"; never put the command in place of the id or '
                "invent a code."
            ),
            "/approve and /deny are typed by the user in the chat: never run them through exec or any other tool.",
            "allow-once covers that one command only; the next command needing approval needs its own /approve.",
        ]
    return "\n".join(lines)


def execution_bias(ctx: PromptContext) -> str:
    return block(
        "## Execution Bias",
        "- When asked to do something, do it in this turn instead of describing a plan.",
        "- Keep going with tools until the task is done or truly blocked; if blocked, ask for the one decision you need.",
        "- After a weak or empty result, try another query, path or command before concluding.",
        "- Check facts that change (files, git state, versions, processes, services, the time) live, not from memory.",
        "- Back a final answer with evidence: test or build output, what you inspected, a tool result, or the exact blocker.",
        "- On long work, send a short progress note and carry on.",
    )
