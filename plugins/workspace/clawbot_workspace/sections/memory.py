"""Memory Recall: search the memory files before answering about the past."""

from __future__ import annotations

from clawbot.types import PromptContext

from clawbot_workspace.sections._text import block


def memory_recall(ctx: PromptContext) -> str | None:
    if not ctx.has_tool("memory_search"):
        return None
    then = "; then use `memory_get` to pull only the lines you need" if ctx.has_tool("memory_get") else ""
    return block(
        "## Memory Recall",
        "Before answering about earlier work, decisions, dates, people, preferences or to-dos, run "
        f"`memory_search` over MEMORY.md and memory/*.md{then}. If nothing convincing turns up, say that you checked.",
    )
