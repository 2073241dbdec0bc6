"""Tool calling for models without native tools: tools in the prompt, calls parsed from text.

Some local models (configured with ``native_tools = false``) cannot take a ``tools``
parameter. For them the request is rewritten: the tools and the calling convention go into
the stable part of the system prompt, earlier tool calls and results become text, and the
reply's ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>`` blocks become ordinary
tool calls again, so the loop does not know the difference.
"""

from __future__ import annotations

import json
import re
import uuid

import attrs

from clawbot.types import Message, ModelRequest, Role, StopReason, TextBlock, ToolCallBlock

_CALL = re.compile(r"<tool_call>\s*(.*?)\s*</tool_call>", re.DOTALL)


def instructions(request: ModelRequest) -> str:
    lines = [
        "## Tools",
        "You can call these tools. To call one, write exactly:",
        '<tool_call>{"name": "<tool name>", "arguments": {<arguments as JSON>}}</tool_call>',
        "Write one block per call and nothing after your last block; the results come back in "
        "<tool_result> blocks. When you need no tool, answer normally.",
        "",
    ]
    for spec in request.tools:
        lines.append(f"### {spec.name}\n{spec.description}\nParameters (JSON schema): {json.dumps(spec.parameters, sort_keys=True)}")
    return "\n".join(lines)


def _as_text(message: Message) -> Message:
    if message.role == Role.TOOL_RESULT:
        body = "".join(b.text for b in message.content if isinstance(b, TextBlock))
        status = ' status="error"' if message.is_error else ""
        text = f'<tool_result name="{message.tool_name or ""}" id="{message.tool_call_id}"{status}>\n{body}\n</tool_result>'
        return Message(Role.USER, (TextBlock(text),))
    if message.role == Role.ASSISTANT and message.tool_calls:
        parts = []
        for block in message.content:
            if isinstance(block, TextBlock):
                parts.append(block.text)
            elif isinstance(block, ToolCallBlock):
                arguments = block.raw_arguments if block.raw_arguments is not None else json.dumps(block.arguments)
                parts.append(f'<tool_call>{{"name": {json.dumps(block.name)}, "arguments": {arguments}}}</tool_call>')
        return attrs.evolve(message, content=(TextBlock("\n".join(p for p in parts if p)),))
    return message


def encode(request: ModelRequest) -> ModelRequest:
    """The request with tools moved into the prompt and tool traffic written as text."""
    system = attrs.evolve(request.system, stable=f"{request.system.stable}\n\n{instructions(request)}")
    return attrs.evolve(request, system=system, messages=tuple(_as_text(m) for m in request.messages), tools=())


def decode(message: Message) -> Message:
    """The reply with its ``<tool_call>`` blocks turned into tool calls."""
    text = message.text
    if "<tool_call>" not in text:
        return message
    blocks: list = []
    prose = _CALL.sub("", text).strip()
    if prose:
        blocks.append(TextBlock(prose))
    for raw in _CALL.findall(text):
        call_id = f"call_{uuid.uuid4().hex[:10]}"
        try:
            payload = json.loads(raw)
            name, arguments = payload["name"], payload.get("arguments", {})
            if not isinstance(name, str) or not isinstance(arguments, dict):
                raise ValueError("name must be a string and arguments an object")
            blocks.append(ToolCallBlock(call_id, name, arguments))
        except (ValueError, KeyError, TypeError):
            match = re.search(r'"name"\s*:\s*"([^"]+)"', raw)
            blocks.append(ToolCallBlock(call_id, match.group(1) if match else "", {}, raw_arguments=raw))
    return attrs.evolve(message, content=tuple(blocks), stop_reason=StopReason.TOOL_USE)
