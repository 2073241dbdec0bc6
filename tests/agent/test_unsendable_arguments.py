"""Arguments JSON cannot carry are refused wherever they are read (clawbot.providerkit), and a
request never carries one out (clawbot.agent.sendable).

The end-to-end side (every SDK, prompt-based calls, an older transcript) is in
tests/e2e/test_unsendable_arguments_e2e.py.
"""

from __future__ import annotations

import pytest
from clawbot import Message, ModelRequest, Role, SystemPrompt, TextBlock, ToolCallBlock, ToolResult
from clawbot.agent.conversation import Conversation
from clawbot.agent.models import ModelChoice
from clawbot.agent.sendable import sendable_request
from clawbot.providerkit import (
    NOT_FINITE,
    NOT_TEXT,
    decoded_tool_arguments,
    parse_tool_arguments,
    tool_arguments_problem,
    value_problem,
)
from clawbot.testing import plugin_from_hooks
from clawbot.types import Tool

from .scripted import ScriptedProvider, call

NAN, INF = float("nan"), float("inf")

# (decoded value, the problem); each is also tried as JSON text where JSON text can say it
BAD_VALUES = {
    "NaN": ({"n": NAN}, NOT_FINITE),
    "Infinity in a list": ({"v": [1, -INF]}, NOT_FINITE),
    "lone surrogate": ({"n": "\ud800"}, NOT_TEXT),
    "lone surrogate in a key": ({"\udfff": 1}, NOT_TEXT),
    "lone surrogate in a tuple": ({"v": ("ok", "a\udbffb")}, NOT_TEXT),
}
BAD_TEXTS = {
    "NaN": ('{"n": NaN}', NOT_FINITE),
    "Infinity": ('{"n": Infinity}', NOT_FINITE),
    "-Infinity": ('{"n": -Infinity}', NOT_FINITE),
    "an overflowing number": ('{"n": -1.5e400}', NOT_FINITE),
    "lone surrogate escape": ('{"n": "\\ud800"}', NOT_TEXT),
    "lone surrogate character": ('{"n": "\ud800"}', NOT_TEXT),
    "low surrogate first": ('{"n": "\\udc00\\ud800"}', NOT_TEXT),
}


@pytest.mark.parametrize("name", list(BAD_TEXTS))
def test_argument_text_json_cannot_carry_is_kept_raw_with_a_reason(name: str) -> None:
    text, problem = BAD_TEXTS[name]
    assert parse_tool_arguments(text) == ({}, text)
    assert tool_arguments_problem(text) == problem


@pytest.mark.parametrize("name", list(BAD_VALUES))
def test_decoded_arguments_json_cannot_carry_are_kept_as_text(name: str) -> None:
    value, problem = BAD_VALUES[name]
    assert value_problem(value) == problem
    arguments, raw = decoded_tool_arguments(value)
    assert arguments == {} and tool_arguments_problem(raw) == problem


@pytest.mark.parametrize(
    "text",
    ['{"n": 1e308, "m": -0.0, "k": 12345678901234567890}', '{"e": "\\ud83d\\ude00 \U0001f600"}', '{"s": "NaN Infinity"}'],
)
def test_finite_numbers_and_real_surrogate_pairs_pass(text: str) -> None:
    arguments, raw = parse_tool_arguments(text)
    assert raw is None and tool_arguments_problem(text) is None and value_problem(arguments) is None


@pytest.mark.parametrize("name", list(BAD_VALUES))
async def test_a_provider_that_decodes_arguments_itself_gets_the_error_result(make_kernel, name: str) -> None:
    value, problem = BAD_VALUES[name]
    ran: list[dict] = []
    tool = Tool("probe", "Any object.", {"type": "object"}, lambda c: ran.append(c.arguments) or ToolResult.text("ran"))
    provider = ScriptedProvider([call("probe", "c1", **value)], "answered", "again")
    kernel = await make_kernel(plugins={"probe": plugin_from_hooks(clawbot_tools=lambda ctx: [tool])})
    conversation = Conversation(kernel, ModelChoice(provider, "m"), "main", services=None)

    turn = await conversation.send("agent:main:main", "go")

    assert turn.text == "answered" and ran == []
    result = provider.requests[1].messages[-1]
    assert result.is_error and result.text.startswith(f"The arguments for probe {problem}")
    assert (await conversation.send("agent:main:main", "and now?")).text == "again"


def test_a_clean_request_is_sent_as_it_is() -> None:
    request = ModelRequest(
        "m",
        SystemPrompt("stable", "volatile"),
        (
            Message.user("hi \U0001f600"),
            Message(Role.ASSISTANT, (ToolCallBlock("c1", "t", {"n": 1.5}),)),
            Message(Role.TOOL_RESULT, (TextBlock("ok"),), tool_call_id="c1", tool_name="t"),
        ),
    )
    assert sendable_request(request) is request


def test_an_unsendable_request_is_cleaned_everywhere() -> None:
    request = ModelRequest(
        "m",
        SystemPrompt("stable \ud800", "volatile"),
        (
            Message.user("hi \udc00"),
            Message(Role.ASSISTANT, (ToolCallBlock("c\ud800", "t\ud800", {"n": NAN}),)),
            Message(Role.ASSISTANT, (ToolCallBlock("c2", "t", {}, raw_arguments='{"n": "\ud800"}'),)),
            Message(Role.TOOL_RESULT, (TextBlock("ok"),), tool_call_id="c\ud800", tool_name="t\ud800"),
        ),
    )
    sent = sendable_request(request)
    assert sent.system.stable == "stable \ufffd" and sent.messages[0].text == "hi \ufffd"
    first = sent.messages[1].tool_calls[0]
    assert (first.id, first.name, first.arguments, first.raw_arguments) == ("c\ufffd", "t\ufffd", {}, '{"n":NaN}')
    assert sent.messages[2].tool_calls[0].raw_arguments == '{"n": "\ufffd"}'
    assert (sent.messages[3].tool_call_id, sent.messages[3].tool_name) == ("c\ufffd", "t\ufffd")
