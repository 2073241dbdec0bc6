"""Where the verbatim part starts: about keep_recent_tokens of the newest messages, never a
tool result cut off from its call, and always something summarised when anything can be."""

from __future__ import annotations

import pytest
from clawbot_compaction.history import history_tokens, kept_budget, render_message, split_index
from hypothesis import given, settings
from hypothesis import strategies as st

from .history_kit import call, orphans, result, said, user

BIG = "x" * 4_000  # 1,000 tokens

HISTORIES = {
    "plain turns": (
        [user(BIG), said(BIG), user(BIG), said(BIG), user("now"), said("ok")],
        1_100,
        3,
    ),
    "the budget ends on a tool result: the call is kept with it": (
        [user(BIG), said(BIG), user("read it"), call("read", "c1", path="/a.txt"), result("read", "c1", BIG), said("done")],
        1_003,
        3,
    ),
    "several results of one call step": (
        [user(BIG), call("read", "c1", path="/a"), call("read", "c2", path="/b"), result("read", "c1", BIG), result("read", "c2", BIG), said("x")],
        1_100,
        1,
    ),
    "everything fits: the current turn stays, the older turns go": ([user("a"), said("b"), user("c"), said("d")], 20_000, 2),
    "one turn that fits: its newest step stays": ([user("do it"), call("exec", "c1", command="ls"), result("exec", "c1", "a b")], 20_000, 1),
    "a single message: nothing to summarise": ([user(BIG)], 10, 0),
    "the newest message alone is over the budget: it stays": ([user(BIG), said(BIG), user(BIG * 3)], 100, 2),
}


@pytest.mark.parametrize(("messages", "budget", "expected"), HISTORIES.values(), ids=HISTORIES.keys())
def test_the_split_keeps_the_newest_part_and_whole_tool_steps(messages, budget, expected) -> None:
    start = split_index(messages, budget)
    assert start == expected
    assert orphans(messages, start) == []


@st.composite
def histories(draw):
    messages, n = [], 0
    for _ in range(draw(st.integers(1, 12))):
        messages.append(user("u" * draw(st.integers(0, 3_000))))
        for _ in range(draw(st.integers(0, 3))):
            ids = [f"c{n + i}" for i in range(draw(st.integers(1, 3)))]
            n += len(ids)
            for i in ids:
                messages.append(call("read", i, path=f"/f/{i}"))
            messages += [result("read", i, "r" * draw(st.integers(0, 5_000))) for i in ids]
        if draw(st.booleans()):
            messages.append(said("a" * draw(st.integers(0, 2_000))))
    return messages


@settings(max_examples=200, deadline=None)
@given(histories(), st.integers(0, 5_000))
def test_no_split_ever_orphans_a_tool_result(messages, budget) -> None:
    start = split_index(messages, budget)
    assert 0 <= start < len(messages) or start == 0
    assert orphans(messages, start) == []
    if len(messages) > 1 and any(m.role.value != "tool_result" for m in messages[1:]):
        assert start > 0  # something is always summarised when it can be


def test_the_kept_part_is_at_most_half_the_window() -> None:
    assert kept_budget(20_000, 200_000) == 20_000
    assert kept_budget(20_000, 16_000) == 8_000


def test_the_transcript_shows_who_spoke_tool_calls_and_results_cut_to_head_and_tail() -> None:
    assert render_message(user("hello")) == "[User (owner)]\nhello"
    assert (
        render_message(call("exec", "c1", "Let me look.", command="ls -la /srv")) == '[Assistant]\nLet me look.\n[tool call: exec] {"command": "ls -la /srv"}'
    )
    long = render_message(result("exec", "c1", "HEAD" + "m" * 50_000 + "TAIL", error=True))
    assert long.startswith("[tool result: exec, error]\n<<<BEGIN UNTRUSTED id=") and ">>>\nHEAD" in long and "TAIL\n<<<END UNTRUSTED" in long
    assert "characters left out" in long and len(long) < 2_400
    assert history_tokens([user("abcd")], "efgh") == 2
