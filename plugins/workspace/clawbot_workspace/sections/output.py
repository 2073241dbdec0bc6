"""How replies are shaped: Reply Tags, Output Directives, Reasoning Format, Silent Replies
and Heartbeats."""

from __future__ import annotations

from clawbot.promptkit import SILENT_TOKEN
from clawbot.types import PromptContext

from clawbot_workspace.sections._text import block

HEARTBEAT_OK = "HEARTBEAT_OK"
HEARTBEAT_FILE = "HEARTBEAT.md"


def reply_tags(ctx: PromptContext) -> str:
    return block(
        "## Reply Tags",
        "To quote-reply the message you are answering (where the channel supports it), make `[[reply_to_current]]` "
        "the first token of your reply. Use `[[reply_to:<id>]]` only with an id you were explicitly given.",
    )


def output_directives(ctx: PromptContext) -> str:
    return block(
        "## Assistant Output Directives",
        "- To attach a file or image, put `MEDIA:<path-or-url>` on a line of its own in your reply, one line per "
        "attachment.",
        "- Write it as plain text at the start of the line: not in a code block, backticks or bold, and not inside "
        "a sentence.",
        "- Directives and reply tags are removed before delivery; the channel decides how media is sent.",
    )


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


def heartbeats(ctx: PromptContext) -> str:
    return block(
        "## Heartbeats",
        f"clawbot may send a heartbeat poll: a message asking you to check {HEARTBEAT_FILE} for anything that "
        "needs attention. Follow that file; do not revive old tasks from earlier chats.",
        f"If nothing needs attention, reply exactly: {HEARTBEAT_OK}",
        f"Otherwise do what is needed or tell the user, without {HEARTBEAT_OK} in that reply.",
    )
