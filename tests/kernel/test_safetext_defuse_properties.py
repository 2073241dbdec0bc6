"""defuse() on any text: every occurrence broken, nothing else touched, folding stays small.

Markers are run into one another ("## Inbound Contextrusted metadata": one phrase starts
inside another) with blanks and ordinary text between; whatever the mix, a second pass finds
nothing left to break, no marker can still be found, and only break marks were added. Text
holding no marker comes back as the very same object, and each folded character maps back
to the character it came from.
"""

from __future__ import annotations

import tracemalloc

from clawbot import OutboundMessage
from clawbot.agent.inbound import SESSION_MESSAGE_LABEL, SYSTEM_EVENT_LABEL, TRUSTED_HEADER
from clawbot.markers import CLOSE, OPEN, TRUSTED_MARKERS
from clawbot.safetext import Folded, defuse, fold
from hypothesis import given, settings
from hypothesis import strategies as st

MARKERS = sorted(
    {
        *TRUSTED_MARKERS,
        TRUSTED_HEADER,
        SYSTEM_EVENT_LABEL,
        SESSION_MESSAGE_LABEL,
        OutboundMessage.NOTICE_MARK,
        "<<<BEGIN UNTRUSTED",
        "<<<END UNTRUSTED",
        OPEN,
        CLOSE,
    }
)
BREAK = "\u2024"
GLUE = ["", " ", "\n", "\u200b", "\u2800", "\u3164", "x", "t", "ab", "\uff3b", "\u017f", "\u0301"]

# A marker with some of its first and last characters cut, so that pieces overlap.
PIECES = st.one_of(
    st.builds(lambda m, front, back: m[front % 4 : len(m) - back % 4], st.sampled_from(MARKERS), st.integers(0, 3), st.integers(0, 3)),
    st.sampled_from(GLUE),
)


def test_a_phrase_starting_inside_another_is_broken_too() -> None:
    once = defuse("## Inbound Contextrusted metadata", TRUSTED_MARKERS)
    assert once.count(BREAK) == 2 and defuse(once, TRUSTED_MARKERS) == once
    assert defuse("ababab", ["abab"]).count(BREAK) == 2  # overlapping occurrences of one phrase


@settings(max_examples=500, deadline=None)
@given(st.lists(PIECES, max_size=12))
def test_one_pass_breaks_every_occurrence_and_only_adds_breaks(pieces: list[str]) -> None:
    text = "".join(pieces)
    once = defuse(text, MARKERS)
    assert defuse(once, MARKERS) == once
    folded = Folded(once)
    assert [m for m in MARKERS if folded.spans(m)] == []
    assert once.replace(BREAK, "") == text.replace(BREAK, "")


TEXT = st.text(st.one_of(st.characters(), st.sampled_from([*"".join(GLUE), "\ufdfa", "\ufb01", "\u0130", "m", "\U0001d400"])))


@settings(max_examples=500, deadline=None)
@given(TEXT)
def test_text_without_a_marker_comes_back_untouched(text: str) -> None:
    folded = fold(text)
    if not any(fold(marker) in folded for marker in MARKERS):
        assert defuse(text, MARKERS) is text


@settings(max_examples=500, deadline=None)
@given(TEXT)
def test_each_folded_character_maps_back_to_the_one_it_came_from(text: str) -> None:
    folded = Folded(text)
    expected = [index for index, char in enumerate(text) for _ in fold(char)]
    assert [folded.origin(i) for i in range(len(folded.folded))] == expected
    assert folded.folded == "".join(fold(char) for char in text)


def test_folding_a_text_that_expands_stays_small() -> None:
    # U+FDFA's compatibility form is 18 letters: the map back must not cost a list entry each.
    text = "\ufdfa" * 100_000
    tracemalloc.start()
    try:
        folded = Folded(text)
        _current, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(folded.folded) > 1_000_000
    assert peak < 20_000_000, f"{peak / 1e6:.0f} MB"
