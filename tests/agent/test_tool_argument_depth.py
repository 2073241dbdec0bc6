"""How deep tool arguments may nest, measured without decoding them (clawbot.providerkit).

The end-to-end side (every SDK, prompt-based calls, the transcript) is in
tests/e2e/test_deep_arguments_e2e.py; this pins the measuring itself.
"""

from __future__ import annotations

import json

import pytest
from clawbot import ToolResult
from clawbot.agent.conversation import Conversation
from clawbot.agent.models import ModelChoice
from clawbot.providerkit import (
    MAX_ARGUMENT_DEPTH,
    TOO_DEEP,
    decoded_tool_arguments,
    parse_tool_arguments,
    text_too_deep,
    tool_arguments_problem,
    value_problem,
)
from clawbot.testing import plugin_from_hooks
from clawbot.types import Tool

from .scripted import ScriptedProvider, call

DEPTHS = (1, 2, MAX_ARGUMENT_DEPTH, MAX_ARGUMENT_DEPTH + 1, 330, 5_000)


def nested_text(depth: int, container: str) -> str:
    """JSON text of an object ``depth`` levels deep, counting the object itself."""
    inner = '"leaf"'
    for _ in range(depth - 1):
        inner = f"[{inner}]" if container == "list" else f'{{"v": {inner}}}'
    return f'{{"v": {inner}}}' if depth > 1 else '{"v": "leaf"}'


def nested_value(depth: int, container: str) -> dict:
    """The same as a decoded value, built without recursion."""
    inner: object = "leaf"
    for _ in range(depth - 1):
        inner = [inner] if container == "list" else {"v": inner}
    return {"v": inner}


@pytest.mark.parametrize("container", ["list", "object"])
@pytest.mark.parametrize("depth", DEPTHS)
def test_argument_text_deeper_than_the_limit_is_kept_raw_undecoded(depth: int, container: str) -> None:
    text = nested_text(depth, container)
    too_deep = depth > MAX_ARGUMENT_DEPTH
    assert text_too_deep(text) is too_deep
    arguments, raw = parse_tool_arguments(text)
    if too_deep:
        assert (arguments, raw) == ({}, text)
        assert tool_arguments_problem(raw) == TOO_DEEP
    else:
        assert raw is None and arguments == json.loads(text)


@pytest.mark.parametrize("container", ["list", "object"])
@pytest.mark.parametrize("depth", DEPTHS)
def test_decoded_arguments_deeper_than_the_limit_are_kept_as_text(depth: int, container: str) -> None:
    value = nested_value(depth, container)
    too_deep = depth > MAX_ARGUMENT_DEPTH
    assert (value_problem(value) == TOO_DEEP) is too_deep
    arguments, raw = decoded_tool_arguments(value)
    if too_deep:
        assert arguments == {} and tool_arguments_problem(raw) == TOO_DEEP
        assert raw == nested_text(depth, container).replace(": ", ":")  # the same JSON, written without recursion
    else:
        assert (arguments, raw) == (value, None)


@pytest.mark.parametrize(
    "text",
    [
        '{"v": "' + "[" * 500 + '"}',  # brackets in a string are text
        '{"v": "\\"' + "{" * 500 + '"}',  # ... also after an escaped quote
        '{"v": "\\\\", "w": "' + "[" * 500 + '"}',  # ... and after an escaped backslash
        '{"a": [1, 2, {"b": [3, {"c": "]]]]]]]]"}]}]}',
    ],
)
def test_brackets_inside_strings_do_not_count(text: str) -> None:
    assert not text_too_deep(text)
    assert parse_tool_arguments(text) == (json.loads(text), None)


@pytest.mark.parametrize(
    ("raw", "problem"),
    [
        ('{"v": 1', "were not valid JSON"),
        ("[1, 2]", "were a JSON array, not an object"),
        ('"text"', "were a JSON string, not an object"),
        ("[" * 70 + "]" * 70, TOO_DEEP),
        ("[" * 5_000, TOO_DEEP),  # malformed and deep: deep is what to fix first
    ],
)
def test_unusable_argument_text_says_what_to_change(raw: str, problem: str) -> None:
    assert tool_arguments_problem(raw).startswith(problem)


@pytest.mark.parametrize("depth", [100, 3000])  # 3000: deeper than json.dumps can write to the transcript
async def test_a_provider_that_decodes_arguments_itself_still_gets_the_depth_error(make_kernel, depth: int) -> None:
    ran: list[dict] = []
    tool = Tool("probe", "Any object.", {"type": "object"}, lambda c: ran.append(c.arguments) or ToolResult.text("ran"))
    deep = call("probe", "c1", **nested_value(depth, "object"))
    provider = ScriptedProvider([deep], "answered")
    kernel = await make_kernel(plugins={"probe": plugin_from_hooks(clawbot_tools=lambda ctx: [tool])})

    turn = await Conversation(kernel, ModelChoice(provider, "m"), "main", services=None).send("agent:main:main", "go")

    assert turn.text == "answered" and ran == []
    result = provider.requests[1].messages[-1]
    assert result.is_error and result.text == f"The arguments for probe {TOO_DEEP}. Send one JSON object matching the tool's schema."
