"""A request every provider SDK can serialise, whatever the session holds.

Two kinds of value pass through Python but not through a JSON request body: a lone UTF-16
surrogate (JSON's ``"\\ud800"`` decodes to one, and UTF-8 cannot encode it) and a
non-finite number (NaN, Infinity: SDKs refuse them). Tool arguments holding either are
refused when the model sends them, but a transcript may still hold some (written by an
older clawbot, or text from a channel or a tool), and one such value would fail every later
request of the session before it reaches the provider. So each request is cleaned on its
way out: lone surrogates become U+FFFD, and a tool call whose arguments cannot be sent is
sent as its text, the way a call with unusable arguments always is. The transcript itself
is left as it was.
"""

from __future__ import annotations

import attrs

from clawbot.providerkit import decoded_tool_arguments, value_problem
from clawbot.safetext import LONE_SURROGATE, sendable
from clawbot.types import ContentBlock, Message, ModelRequest, TextBlock, ThinkingBlock, ToolCallBlock


def sendable_request(request: ModelRequest) -> ModelRequest:
    """``request`` with nothing in it a JSON request body cannot carry (the same object when clean)."""
    messages = tuple(sendable_message(m) for m in request.messages)
    system = request.system
    if LONE_SURROGATE.search(system.stable) or LONE_SURROGATE.search(system.volatile):
        system = attrs.evolve(system, stable=sendable(system.stable), volatile=sendable(system.volatile))
    if system is request.system and all(a is b for a, b in zip(messages, request.messages, strict=True)):
        return request
    return attrs.evolve(request, system=system, messages=messages)


def sendable_message(message: Message) -> Message:
    content = tuple(_block(b) for b in message.content)
    tool_call_id, tool_name = _text(message.tool_call_id), _text(message.tool_name)
    same_names = (tool_call_id, tool_name) == (message.tool_call_id, message.tool_name)
    if same_names and all(a is b for a, b in zip(content, message.content, strict=True)):
        return message
    return attrs.evolve(message, content=content, tool_call_id=tool_call_id, tool_name=tool_name)


def _text(value: str | None) -> str | None:
    return None if value is None else sendable(value)


def _block(block: ContentBlock) -> ContentBlock:
    if isinstance(block, TextBlock | ThinkingBlock):
        return block if not LONE_SURROGATE.search(block.text) else attrs.evolve(block, text=sendable(block.text))
    if isinstance(block, ToolCallBlock):
        arguments, raw = block.arguments, block.raw_arguments
        if raw is None and value_problem(arguments) is not None:
            arguments, raw = decoded_tool_arguments(arguments)
        cleaned = (sendable(block.id), sendable(block.name), _text(raw))
        if arguments is block.arguments and cleaned == (block.id, block.name, raw):
            return block
        call_id, name, raw = cleaned
        return attrs.evolve(block, id=call_id, name=name, arguments=arguments, raw_arguments=raw)
    return block
