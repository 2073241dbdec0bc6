"""Pruning old tool results in the request: the rules, case by case, on message lists.

The window is 100,000 tokens (400,000 characters): soft trimming starts above 120,000
characters of context, hard clearing above 200,000 (the default ratios 0.3 and 0.5).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from clawbot.agent.pruning import SessionPruning, prune_messages
from clawbot.config.context_schema import ContextPruningConfig, HardClearConfig, SoftTrimConfig
from clawbot.types import ImageBlock, Message, Role, TextBlock, ToolCallBlock

WINDOW = 100_000
PLACEHOLDER = "[Old tool result content cleared]"
IMAGE = ImageBlock("image/png", data="iVBORw0KGgo=")


def body(n: int, size: int) -> str:
    """A result of ``size`` characters whose head and tail say which result they belong to."""
    head, tail = f"<r{n} head>", f"<r{n} tail>"
    return head + "x" * (size - len(head) - len(tail)) + tail


def exchange(n: int, size: int, *, image: bool = False) -> list[Message]:
    """The user asks, the model calls a tool, the result (``size`` characters), the answer."""
    content = (TextBlock(body(n, size)), *((IMAGE,) if image else ()))
    return [
        Message.user(f"question {n}"),
        Message(Role.ASSISTANT, (ToolCallBlock(f"c{n}", "exec", {"command": f"job {n}"}),)),
        Message(Role.TOOL_RESULT, content, tool_call_id=f"c{n}", tool_name="exec"),
        Message.assistant(f"answer {n}"),
    ]


def history(*sizes: int, images: tuple[int, ...] = ()) -> list[Message]:
    messages = [m for n, size in enumerate(sizes, 1) for m in exchange(n, size, image=n in images)]
    return [*messages, Message.user("and now?")]


def trimmed(n: int, size: int) -> str:
    cut = size - 3_000
    return body(n, size)[:1_500] + f"\n... [{cut:,} of {size:,} characters of this old tool result cut] ...\n" + body(n, size)[-1_500:]


def results(messages: list[Message]) -> list[tuple[str, ...]]:
    """Each tool result as its text (and ``<image>`` for each image block)."""
    return [tuple(b.text if isinstance(b, TextBlock) else "<image>" for b in m.content) for m in messages if m.role == Role.TOOL_RESULT]


NO_SOFT_TRIM = SoftTrimConfig(max_chars=10_000_000)
CASES = {
    # r3 belongs to the newest three assistant messages (its call and the two answers around it)
    "soft trim of the old large results": ({}, (60_000, 60_000, 60_000), (), [(trimmed(1, 60_000),), (trimmed(2, 60_000),), (body(3, 60_000),)]),
    "hard clear of the oldest until below the ratio": (
        {"soft_trim": NO_SOFT_TRIM},
        (99_000, 99_000, 99_000, 99_000),
        (),
        [(PLACEHOLDER,), (PLACEHOLDER,), (body(3, 99_000),), (body(4, 99_000),)],
    ),
    "hard clear switched off": (
        {"soft_trim": NO_SOFT_TRIM, "hard_clear": HardClearConfig(enabled=False)},
        (100_000, 100_000, 100_000, 100_000),
        (),
        [(body(n, 100_000),) for n in range(1, 5)],
    ),
    "soft trim then hard clear when trimming is not enough": (
        {"soft_trim": SoftTrimConfig(max_chars=50_000, head_chars=20_000, tail_chars=20_000)},
        (100_000, 100_000, 100_000, 100_000),
        (),
        [
            (PLACEHOLDER,),
            (body(2, 100_000)[:20_000] + "\n... [60,000 of 100,000 characters of this old tool result cut] ...\n" + body(2, 100_000)[-20_000:],),
            (body(3, 100_000)[:20_000] + "\n... [60,000 of 100,000 characters of this old tool result cut] ...\n" + body(3, 100_000)[-20_000:],),
            (body(4, 100_000),),
        ],
    ),
    "keep_last_assistants 0 prunes the newest result too": (
        {"keep_last_assistants": 0},
        (60_000, 60_000, 60_000),
        (),
        [(trimmed(n, 60_000),) for n in (1, 2, 3)],
    ),
    "keep_last_assistants 5 protects the two newest results": (
        {"keep_last_assistants": 5},
        (60_000, 60_000, 60_000),
        (),
        [(trimmed(1, 60_000),), (body(2, 60_000),), (body(3, 60_000),)],
    ),
    "fewer assistant messages than keep_last_assistants: nothing": (
        {"keep_last_assistants": 7},
        (60_000, 60_000, 60_000),
        (),
        [(body(n, 60_000),) for n in (1, 2, 3)],
    ),
    "prunable results below min_prunable_tool_chars: nothing": (
        {},
        (20_000, 20_000, 200_000),
        (),
        [(body(1, 20_000),), (body(2, 20_000),), (body(3, 200_000),)],
    ),
    "context within soft_trim_ratio: nothing": ({}, (30_000, 30_000, 30_000), (), [(body(n, 30_000),) for n in (1, 2, 3)]),
    "short results stay whole": ({}, (4_000, 100_000, 60_000), (), [(body(1, 4_000),), (trimmed(2, 100_000),), (body(3, 60_000),)]),
    "an image is kept by soft trim": ({}, (60_000, 60_000, 60_000), (1,), [(trimmed(1, 60_000), "<image>"), (trimmed(2, 60_000),), (body(3, 60_000),)]),
    "an image goes with hard clear": (
        {"soft_trim": NO_SOFT_TRIM},
        (99_000, 99_000, 99_000, 93_000),
        (1,),
        [(PLACEHOLDER,), (PLACEHOLDER,), (body(3, 99_000),), (body(4, 93_000),)],
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_pruning_rules(case: str) -> None:
    settings, sizes, images, expected = CASES[case]
    messages = history(*sizes, images=images)
    pruned = prune_messages(messages, ContextPruningConfig(**settings), WINDOW)
    assert results(pruned) == expected
    # only tool results change, and the list given is left as it was
    assert [m for m in pruned if m.role != Role.TOOL_RESULT] == [m for m in messages if m.role != Role.TOOL_RESULT]
    assert [m.tool_call_id for m in pruned] == [m.tool_call_id for m in messages]
    assert results(messages) == [(body(n, s), *(("<image>",) if n in images else ())) for n, s in enumerate(sizes, 1)]


def test_the_system_prompt_counts_toward_the_ratio() -> None:
    messages = history(40_000, 40_000, 30_000)  # 110,000 characters: under the 120,000
    config = ContextPruningConfig()
    assert results(prune_messages(messages, config, WINDOW)) == results(messages)
    assert results(prune_messages(messages, config, WINDOW, base_chars=20_000))[0] == (trimmed(1, 40_000),)


# -- across requests: the decision is kept until the cache expires again ---------------------------


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


class _Turn:
    """One turn in a process of its own: its request, then what a turn stores as it ends."""

    def __init__(self, pruning: SessionPruning) -> None:
        self.pruning = pruning

    def request_messages(self, messages: list[Message], window: int) -> list[Message]:
        sent = self.pruning.request_messages(messages, window)
        self.pruning.save()
        return sent


def _open(tmp_path: Path, clock: Clock, **settings) -> _Turn:
    return _Turn(SessionPruning.open(ContextPruningConfig(**settings), tmp_path / "s1.jsonl", clock))


def test_mode_off_changes_nothing_and_stores_nothing(tmp_path: Path) -> None:
    clock = Clock()
    messages = history(60_000, 60_000, 60_000)
    for step in (0, 600, 1200):
        clock.now += step
        assert list(_open(tmp_path, clock, mode="off").request_messages(messages, WINDOW)) == messages
    assert list(tmp_path.iterdir()) == []


def test_a_session_with_nothing_to_prune_stores_nothing(tmp_path: Path) -> None:
    clock = Clock()
    small = history(2_000, 2_000)  # far under min_prunable_tool_chars
    for step in (0, 600):
        clock.now += step
        assert _open(tmp_path, clock).request_messages(small, WINDOW) == small
    assert list(tmp_path.iterdir()) == []
    big = history(60_000, 60_000, 60_000)  # once it could prune, the request's time is kept
    _open(tmp_path, clock).request_messages(big, WINDOW)
    assert [p.name for p in tmp_path.iterdir()] == ["s1.pruning.json"]


def test_the_decision_holds_until_the_next_expiry_and_survives_a_restart(tmp_path: Path) -> None:
    clock = Clock()
    messages = history(60_000, 60_000, 60_000)
    assert _open(tmp_path, clock).request_messages(messages, WINDOW) == messages  # first request: nothing known
    clock.now += 299
    assert _open(tmp_path, clock).request_messages(messages, WINDOW) == messages  # within the TTL
    clock.now += 300
    pruned = _open(tmp_path, clock).request_messages(messages, WINDOW)  # expired: pruned
    assert results(pruned) == [(trimmed(1, 60_000),), (trimmed(2, 60_000),), (body(3, 60_000),)]

    # Later requests of this cache period (a new process each, as `clawbot agent -m`) send the
    # same prefix byte for byte, and leave what came after the decision alone, though r3 and
    # r4 are now old enough to be pruned.
    longer = messages[:-1] + exchange(4, 60_000)[1:] + exchange(5, 60_000)
    for _ in range(3):
        clock.now += 200
        again = _open(tmp_path, clock).request_messages(longer, WINDOW)
        assert again[: len(pruned)] == pruned[:-1] + [longer[len(pruned) - 1]]
        assert results(again)[2:] == [(body(3, 60_000),), (body(4, 60_000),), (body(5, 60_000),)]
    state = json.loads((tmp_path / "s1.pruning.json").read_text())
    assert state == {"last_request_at": clock.now, "plan": {"2:c1": "trim", "6:c2": "trim"}}

    clock.now += 300  # the next expiry decides afresh
    assert results(_open(tmp_path, clock).request_messages(longer, WINDOW)) == [
        *[(trimmed(n, 60_000),) for n in (1, 2, 3, 4)],
        (body(5, 60_000),),
    ]


def test_a_decision_applies_to_the_same_results_only(tmp_path: Path) -> None:
    clock = Clock()
    messages = history(60_000, 60_000, 60_000)
    _open(tmp_path, clock).request_messages(messages, WINDOW)
    clock.now += 400
    _open(tmp_path, clock).request_messages(messages, WINDOW)
    # after a compaction the history starts over: other results stand where c1 and c2 stood
    other = [m if m.role != Role.TOOL_RESULT else Message(Role.TOOL_RESULT, m.content, tool_call_id="z" + m.tool_call_id) for m in messages]
    clock.now += 10
    assert _open(tmp_path, clock).request_messages(other, WINDOW) == other


@pytest.mark.parametrize("stored", ["not json", "[]", '{"last_request_at": "soon", "plan": {}}', '{"last_request_at": 1, "plan": {"0:c1": "shred"}}'])
def test_a_malformed_state_file_means_no_request_is_known(tmp_path: Path, stored: str) -> None:
    clock = Clock()
    (tmp_path / "s1.pruning.json").write_text(stored)
    messages = history(60_000, 60_000, 60_000)
    assert _open(tmp_path, clock).request_messages(messages, WINDOW) == messages
    clock.now += 300
    assert results(_open(tmp_path, clock).request_messages(messages, WINDOW))[0] == (trimmed(1, 60_000),)


def test_ttl_zero_prunes_every_request(tmp_path: Path) -> None:
    messages = history(60_000, 60_000, 60_000)
    assert results(_open(tmp_path, Clock(), ttl_seconds=0).request_messages(messages, WINDOW))[0] == (trimmed(1, 60_000),)
