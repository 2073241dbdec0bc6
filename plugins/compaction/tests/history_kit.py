"""Histories for the compaction tests: turns of user text, tool calls and their results."""

from __future__ import annotations

from clawbot.types import Message, Role, TextBlock, ToolCallBlock


def user(text: str) -> Message:
    return Message.user(text)


def said(text: str) -> Message:
    return Message.assistant(text)


def call(name: str, call_id: str, text: str = "", **arguments: object) -> Message:
    blocks = ((TextBlock(text),) if text else ()) + (ToolCallBlock(call_id, name, dict(arguments)),)
    return Message(Role.ASSISTANT, blocks)


def result(name: str, call_id: str, text: str, *, error: bool = False) -> Message:
    return Message(Role.TOOL_RESULT, (TextBlock(text),), tool_call_id=call_id, tool_name=name, is_error=error)


def orphans(messages: list[Message], start: int) -> list[str]:
    """Ids of kept tool results whose call is not kept."""
    calls = {c.id for m in messages[start:] for c in m.tool_calls}
    return [m.tool_call_id for m in messages[start:] if m.role == Role.TOOL_RESULT and m.tool_call_id not in calls]
