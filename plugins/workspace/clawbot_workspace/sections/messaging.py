"""Messaging (after the cache boundary: it names the channel), Voice and Reactions."""

from __future__ import annotations

from clawbot.promptkit import SILENT_TOKEN
from clawbot.types import PromptContext

from clawbot_workspace.sections._text import block

SYSTEM_EVENT_PREFIX = "[System event from clawbot"


def messaging(ctx: PromptContext) -> str:
    where = f" ({ctx.channel})" if ctx.channel else ""
    lines = [
        "## Messaging",
        f"- Your reply in this session goes back to the chat it came from{where} automatically.",
    ]
    if ctx.has_tool("sessions_send"):
        lines.append("- To reach another session or agent, use `sessions_send`.")
    sources = "finished jobs, approvals, schedules" if ctx.has_tool("cron") else "finished jobs, approvals"
    lines += [
        (
            f'- "{SYSTEM_EVENT_PREFIX} ...]" messages come from clawbot ({sources}), not '
            "the user. If one calls for a user update, write it in your own words; do not paste its raw text."
        ),
        "- Never send messages through exec, curl or similar; clawbot does all delivery.",
    ]
    if ctx.has_tool("message"):
        lines += [
            "### message tool",
            ("- `message` sends to this chat by default. To send elsewhere pass `target` with `message`, and `channel` only when it is not this channel."),
            (f"- If you delivered your answer to this chat with `message`, reply with only {SILENT_TOKEN} so it is not sent twice."),
        ]
    return "\n".join(lines)


def voice(ctx: PromptContext) -> str | None:
    if not ctx.has_tool("tts"):
        return None
    return block(
        "## Voice",
        "The `tts` tool turns text into a voice message. Use it when the user asks for audio or talks to you by "
        "voice; keep spoken text short and plain (no markdown, lists or URLs).",
    )


def reactions(ctx: PromptContext) -> str | None:
    if "reactions" not in ctx.capabilities:
        return None
    return block(
        "## Reactions",
        "This channel supports emoji reactions. Use one sparingly, to acknowledge a message when no text reply "
        "is needed or to mark a clear emotional beat; never react to every message.",
    )
