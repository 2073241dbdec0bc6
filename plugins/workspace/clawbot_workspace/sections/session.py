"""Group Chat / Sub-agent: what kind of conversation this is, when it is not a private one."""

from __future__ import annotations

from clawbot.promptkit import SILENT_TOKEN
from clawbot.types import PromptContext

from clawbot_workspace.sections._text import block


def session_context(ctx: PromptContext) -> str | None:
    if ctx.session_kind == "group":
        return block(
            "## Group Chat",
            f"You are in a group chat with several people. Reply when you are addressed or can clearly help; otherwise reply with only {SILENT_TOKEN}.",
            "Your private memory (MEMORY.md) is not loaded here; never reveal the owner's private information to the group.",
        )
    if ctx.session_kind == "subagent":
        return block(
            "## Sub-agent",
            "You are a sub-agent started by another session for one task. Do the task, then reply with the "
            "result (what you did, what you found, what is left) for the session that started you.",
            "No greetings or small talk; ask a question only when you cannot go on without an answer.",
        )
    return None
