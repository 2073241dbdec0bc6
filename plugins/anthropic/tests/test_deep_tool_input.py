"""A tool_use block whose whole input arrives decoded in its start event (no JSON deltas)
goes through the same depth limit as streamed argument text."""

from __future__ import annotations

import json

import pytest
from clawbot.providerkit import MAX_ARGUMENT_DEPTH, TOO_DEEP, tool_arguments_problem


def nested(depth: int) -> dict:
    inner: object = "leaf"
    for _ in range(depth - 1):
        inner = {"v": inner}
    return {"v": inner}


@pytest.mark.parametrize("depth", [MAX_ARGUMENT_DEPTH, MAX_ARGUMENT_DEPTH + 1, 5_000])
def test_tool_input_in_the_start_event_is_held_to_the_depth_limit(depth: int) -> None:
    from clawbot_anthropic.wire import StreamAccumulator

    acc = StreamAccumulator()
    block = {"type": "tool_use", "id": "toolu_01", "name": "probe", "input": nested(depth)}
    acc.feed({"type": "message_start", "message": {"model": "claude-test", "usage": {"input_tokens": 1}}})
    acc.feed({"type": "content_block_start", "index": 0, "content_block": block})
    acc.feed({"type": "content_block_stop", "index": 0})
    acc.feed({"type": "message_stop"})

    (call,) = acc.message(provider="anthropic", model="claude-test").tool_calls

    if depth <= MAX_ARGUMENT_DEPTH:
        assert (call.arguments, call.raw_arguments) == (nested(depth), None)
    else:
        assert call.arguments == {} and tool_arguments_problem(call.raw_arguments) == TOO_DEEP
        assert json.dumps(nested(70)).replace(": ", ":")[:200] == call.raw_arguments[:200]
