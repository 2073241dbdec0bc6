"""Finding the calls in a prompt-based reply: edge cases and hostile text (unit level; the
quoting rules themselves are driven through real turns in tests/e2e)."""

from __future__ import annotations

import re

import pytest
from clawbot_prompt_tools.calls import find_calls

CALL = '<tool_call>{"name": "mark", "arguments": {"label": "x"}}</tool_call>'


def test_a_call_that_is_never_closed_is_text_and_nothing_after_it_runs() -> None:
    text = f'Let me try <tool_call>{{"name": "mark", "arguments": {{"label": "x"}}}} and then {CALL.replace("</tool_call>", "")}'
    assert find_calls(text) == (text, [])


def test_malformed_calls_keep_their_text_for_the_error_and_later_calls_still_run() -> None:
    prose, calls = find_calls(f'<tool_call>{{"name": "mark", "arguments": {{"label": </tool_call>\n{CALL}')
    assert prose == "\n"
    broken, good = calls
    assert (broken.name, broken.arguments) == ("mark", {}) and broken.raw_arguments.startswith('{"name": "mark"')
    assert (good.name, good.arguments, good.raw_arguments) == ("mark", {"label": "x"}, None)


@pytest.mark.parametrize(
    ("payload", "name", "raw"),
    [
        ('{"name": "mark", "arguments": "label=x"}', "mark", '"label=x"'),  # arguments must be an object
        ('{"name": "mark", "arguments": [1]}', "mark", "[1]"),
        ('{"arguments": {"name": "exec"}}', "", '{"arguments": {"name": "exec"}}'),  # no tool name: no guessing
    ],
)
def test_a_call_of_the_wrong_shape_is_answered_not_run(payload: str, name: str, raw: str) -> None:
    _, (call,) = find_calls(f"<tool_call>{payload}</tool_call>")
    assert (call.name, call.arguments, call.raw_arguments) == (name, {}, raw)


def test_each_call_gets_its_own_random_id() -> None:
    _, calls = find_calls(CALL * 50)
    ids = {c.id for c in calls}
    assert len(ids) == 50 and all(re.fullmatch(r"call_[0-9a-f]{16}", i) for i in ids)


HOSTILE = {
    "unclosed strings in many calls": '<tool_call>{"' * 30_000 + "</tool_call>",
    "quoted closers in many calls": '<tool_call>{"a":"</tool_call>' * 10_000,
    "unclosed objects": "<tool_call>{" * 20_000 + "</tool_call>",
    "backtick runs of every length": " x ".join("`" * n for n in range(1, 650)) + CALL,
    "fence openers": "```\n" * 40_000 + CALL,
    "quote lines": "> x\n" * 50_000 + "\n" + CALL,
    "thinking openers": "<think>" * 30_000 + CALL,
    "escaped quotes": '<tool_call>{"' + '\\"' * 100_000 + CALL,
}


@pytest.mark.parametrize("text", HOSTILE.values(), ids=HOSTILE.keys())
def test_hostile_replies_are_read_in_one_pass(text: str) -> None:
    # Linear: well under 0.1 s each; quadratic: minutes, past the suite's per-test timeout.
    prose, calls = find_calls(text)
    assert len(calls) <= text.count("<tool_call>") and len(prose) <= len(text)
