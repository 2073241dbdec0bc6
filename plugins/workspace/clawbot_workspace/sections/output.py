"""How replies are shaped: Reasoning Format, Output Directives and Silent Replies."""

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


def heartbeats(ctx: PromptContext) -> str | None:
    """Only where heartbeats run for the agent: the poll they send and the answer to nothing."""
    if not ctx.heartbeat_prompt:
        return None
    return block(
        "## Heartbeats",
        f"Heartbeat prompt: {ctx.heartbeat_prompt}",
        "If you receive a heartbeat poll (a system event from clawbot matching the heartbeat prompt above), "
        "and there is nothing that needs attention, reply exactly: HEARTBEAT_OK",
        "clawbot treats a leading/trailing HEARTBEAT_OK as a heartbeat ack and does not send it.",
        "If something needs attention, do NOT include HEARTBEAT_OK; reply with the alert text instead.",
    )


def output_directives(ctx: PromptContext) -> str | None:
    """Reply tags and ``MEDIA:`` lines, offered only where the channel delivers them."""
    lines = []
    if "media" in ctx.capabilities:
        lines += [
            "- To attach a file or image, put `MEDIA:<path-or-url>` on its own line of the final reply (a path inside "
            "the workspace, or an http(s) link). One line per attachment, plain text: not in a code block, not in bold "
            "or backticks, not inside a sentence.",
        ]
        if ctx.has_tool("tts"):
            lines.append("- When the attachment is audio meant as a voice note, add `[[audio_as_voice]]`.")
    if "replies" in ctx.capabilities:
        lines.append(
            "- To answer as a native reply to the message you are answering, start with `[[reply_to_current]]`; "
            "use `[[reply_to:<id>]]` only with an id you were given."
        )
    if not lines:
        return None
    return block("## Output Directives", *lines, "- These lines are removed before the reply is shown.")
