"""Values in range on their own that would defeat what their key is for are refused, by key.

A window the kernel refuses (every message would end in a context overflow), an empty memory
flush message, a "trimmed" tool result longer than the ones kept whole, clearing that starts
before trimming: each is a startup error naming the key, never a silent misbehaviour.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .confighelpers import load_config, problems_of

FLUSH = "[agents.defaults.compaction.memory_flush]\n"
PRUNING = "[agents.defaults.context_pruning]\n"
SOFT_TRIM = "[agents.defaults.context_pruning.soft_trim]\n"

# (why, configuration, the one problem it must report)
REFUSED = [
    ("a window the kernel refuses", "[agents.defaults]\ncontext_tokens = 8192\n",
     "agents.defaults.context_tokens: must be 0 (each model's own window) or at least 16,000, got 8,192"),
    ("a window of one token", "[agents.defaults]\ncontext_tokens = 1\n",
     "agents.defaults.context_tokens: must be 0 (each model's own window) or at least 16,000, got 1"),
    ("an empty flush message", f'{FLUSH}prompt = ""\n',
     "agents.defaults.compaction.memory_flush.prompt: must not be empty while enabled = true (set enabled = false to turn the flush off)"),
    ("a blank flush message", f'{FLUSH}prompt = "  \\n"\n',
     "agents.defaults.compaction.memory_flush.prompt: must not be empty while enabled = true (set enabled = false to turn the flush off)"),
    ("a trim longer than what stays whole", f"{SOFT_TRIM}max_chars = 4000\nhead_chars = 3000\ntail_chars = 1500\n",
     "agents.defaults.context_pruning.soft_trim.head_chars: head_chars + tail_chars (3000 + 1500) must not exceed max_chars (4000)"),
    ("clearing before trimming", f"{PRUNING}soft_trim_ratio = 0.6\nhard_clear_ratio = 0.4\n",
     "agents.defaults.context_pruning.hard_clear_ratio: must be at least soft_trim_ratio (0.6), got 0.4"),
]  # fmt: skip


@pytest.mark.parametrize(("why", "text", "problem"), REFUSED, ids=[case[0] for case in REFUSED])
def test_a_setting_that_defeats_its_purpose_is_refused_by_key(tmp_path: Path, why: str, text: str, problem: str) -> None:
    assert problems_of(tmp_path, text) == [problem]


ACCEPTED = [
    ("each model's own window", "[agents.defaults]\ncontext_tokens = 0\n"),
    ("the smallest usable window", "[agents.defaults]\ncontext_tokens = 16000\n"),
    ("no flush, no message", f'{FLUSH}enabled = false\nprompt = ""\n'),
    ("a trim exactly as long as what stays whole", f"{SOFT_TRIM}max_chars = 3000\nhead_chars = 1500\ntail_chars = 1500\n"),
    ("clearing and trimming at the same share", f"{PRUNING}soft_trim_ratio = 0.5\nhard_clear_ratio = 0.5\n"),
]


@pytest.mark.parametrize(("why", "text"), ACCEPTED, ids=[case[0] for case in ACCEPTED])
def test_the_limits_themselves_are_accepted(tmp_path: Path, why: str, text: str) -> None:
    assert load_config(tmp_path, text).config is not None
