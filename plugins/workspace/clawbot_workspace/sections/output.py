"""How replies are shaped: Reasoning Format and Silent Replies."""

from __future__ import annotations

from clawbot.promptkit import SILENT_TOKEN
from clawbot.types import PromptContext

from clawbot_workspace.sections._text import block


def reasoning_format(ctx: PromptContext) -> str | None:
    if not ctx.reasoning_tags:
        return None
    return block(
        "## Reasoning Format",
        "Put all of your reasoning inside <think>...</think> and the answer for the user inside <final>...</final>. "
        "Only the text inside <final> reaches the user.",
    )


def silent_replies(ctx: PromptContext) -> str:
    return block(
        "## Silent Replies",
        f"When there is nothing to say, reply with only: {SILENT_TOKEN}",
        "- It must be the whole message: nothing before or after it, no markdown or code block around it.",
        "- Never add it to a real reply.",
    )
