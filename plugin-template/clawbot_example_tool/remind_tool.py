"""The ``example_tool_remind`` tool: the model sets a reminder for the chat it talks to.

It does not know where reminders are kept or how they are sent: it asks for the
:class:`~clawbot_example_tool.reminders.ExampleToolReminders` capability, which clawbot
builds for this call's chat.
"""

from __future__ import annotations

from clawbot import Tool, ToolCall, ToolResult
from clawbot.types import ServiceUnavailable

from clawbot_example_tool.reminders import MAX_DELAY_S, ExampleToolReminders

PARAMETERS = {
    "type": "object",
    "properties": {
        "text": {"type": "string", "description": "What to remind the user of, as they should read it."},
        "in_minutes": {"type": "number", "minimum": 0, "description": "In how many minutes."},
    },
    "required": ["text", "in_minutes"],
    "additionalProperties": False,
}


async def remind(call: ToolCall) -> ToolResult:
    text, minutes = call.arguments.get("text"), call.arguments.get("in_minutes")
    if not isinstance(text, str) or not text.strip():
        return ToolResult.error("`text` must say what to remind the user of.")
    if not isinstance(minutes, int | float) or isinstance(minutes, bool) or not 0 <= minutes * 60 <= MAX_DELAY_S:
        return ToolResult.error("`in_minutes` must be a number from 0 to 10080 (a week).")
    if call.services is None:
        return ToolResult.error("reminders can only be set in an agent's turn")
    try:
        reminders = call.services.capability(ExampleToolReminders)
    except ServiceUnavailable as exc:  # e.g. no chat to send it to: the model tells the user
        return ToolResult.error(f"no reminder was set: {exc}")
    reminders.add(text.strip(), minutes * 60)
    return ToolResult.text(f"Reminder set: in {minutes:g} minutes I will send {text.strip()!r} to this chat.")


def remind_tool() -> Tool:
    return Tool(
        name="example_tool_remind",
        description="Send the user a reminder in this chat after some minutes. Use it when the user asks to be reminded of something later.",
        parameters=PARAMETERS,
        handler=remind,
        summary="Remind the user of something in this chat, later",
        group="messaging",
    )
