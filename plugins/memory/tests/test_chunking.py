"""Markdown -> chunks: whole lines, about chunk_tokens each, headings kept with their text."""

from __future__ import annotations

import pytest
from clawbot.tokens import estimate_tokens
from clawbot_memory.chunking import chunk_markdown, split_lines
from hypothesis import given, settings
from hypothesis import strategies as st


def spans(text: str, **kw) -> list[tuple[int, int]]:
    return [(c.start_line, c.end_line) for c in chunk_markdown(text, **kw)]


def para(n: int, word: str = "wor") -> str:
    """A line of about ``n`` tokens (four characters a token, the newline included)."""
    return (word + " ") * (n - 1) + word[:2]


@pytest.mark.parametrize(
    ("text", "kw", "expected"),
    [
        ("", {}, []),
        ("\n\n   \n", {}, []),
        ("one line", {}, [(1, 1)]),
        ("a\nb\nc\n", {}, [(1, 3)]),
        # lines of ~10 tokens into 30-token chunks, 10-token overlap: each chunk repeats the last line
        ("\n".join(para(10) for _ in range(6)), {"chunk_tokens": 30, "overlap_tokens": 10}, [(1, 3), (3, 5), (5, 6)]),
        # no overlap
        ("\n".join(para(10) for _ in range(6)), {"chunk_tokens": 30, "overlap_tokens": 0}, [(1, 3), (4, 6)]),
        # a heading starts a new chunk once the current one is not tiny, without overlap
        ("# A\n" + para(60) + "\n# B\n" + para(60), {"chunk_tokens": 400, "overlap_tokens": 80}, [(1, 2), (3, 4)]),
        # ... the same with a first section of only a few words (under an eighth of a chunk): one chunk
        ("# A\n" + para(20) + "\n# B\n" + para(20), {"chunk_tokens": 400, "overlap_tokens": 80}, [(1, 4)]),
        # ... but a tiny chunk (a heading alone) keeps the next heading with it
        ("# A\n# B\n" + para(10), {"chunk_tokens": 400, "overlap_tokens": 80}, [(1, 3)]),
        # a heading inside a code fence is code
        ("# A\n" + para(60) + "\n```\n# not a heading\n```\n" + para(5), {"chunk_tokens": 400, "overlap_tokens": 0}, [(1, 6)]),
        # a line longer than a chunk is a chunk of its own, and the chunks around it go on
        (para(5) + "\n" + para(100) + "\n" + para(5), {"chunk_tokens": 30, "overlap_tokens": 10}, [(1, 1), (2, 2), (3, 3)]),
        # a heading that would end a full chunk moves on with its text
        (para(12) + "\n" + para(12) + "\n## H\n" + para(12), {"chunk_tokens": 30, "overlap_tokens": 0}, [(1, 2), (3, 4)]),
        # Windows line ends count one line each
        ("a\r\nb\r\n", {}, [(1, 2)]),
    ],
    ids=[
        "empty",
        "blank",
        "one",
        "short",
        "overlap",
        "no-overlap",
        "headings",
        "small-section",
        "tiny-heading",
        "fence",
        "long-line",
        "heading-moves-on",
        "crlf",
    ],
)
def test_chunk_boundaries(text: str, kw: dict, expected: list[tuple[int, int]]) -> None:
    assert spans(text, **kw) == expected


def test_chunk_text_is_exactly_its_lines() -> None:
    text = "# Title\r\nfirst\n\nsecond\n"
    (chunk,) = chunk_markdown(text)
    assert chunk.text == "# Title\nfirst\n\nsecond"
    assert chunk.hash == chunk_markdown(text)[0].hash != chunk_markdown(text + "x")[0].hash


markdown_lines = st.lists(
    st.one_of(
        st.text(alphabet="abc xyz", min_size=0, max_size=120),
        st.builds(lambda n, t: "#" * n + " " + t, st.integers(1, 6), st.text(alphabet="abc ", max_size=30)),
        st.just("```"),
        st.just(""),
        st.text(alphabet="q ", min_size=300, max_size=900),  # longer than a small chunk
    ),
    max_size=60,
)


@settings(max_examples=150, deadline=None)
@given(lines=markdown_lines, size=st.integers(16, 120), overlap_share=st.floats(0, 0.9))
def test_chunking_properties(lines: list[str], size: int, overlap_share: float) -> None:
    text = "\n".join(lines)
    overlap = int(size * overlap_share)
    chunks = chunk_markdown(text, chunk_tokens=size, overlap_tokens=overlap)
    numbered = split_lines(text)
    covered: set[int] = set()
    previous_start = 0
    for chunk in chunks:
        # line ranges are 1-based, inclusive, in order, and the text is exactly those lines
        assert 1 <= chunk.start_line <= chunk.end_line <= len(numbered)
        assert chunk.start_line > previous_start
        previous_start = chunk.start_line
        assert chunk.text == "\n".join(numbered[chunk.start_line - 1 : chunk.end_line])
        assert chunk.text.strip()
        # within the size, unless it is one line longer than a chunk on its own
        tokens = sum(estimate_tokens(len(line) + 1) for line in numbered[chunk.start_line - 1 : chunk.end_line])
        assert tokens <= size or chunk.start_line == chunk.end_line
        covered.update(range(chunk.start_line, chunk.end_line + 1))
    # every line with text is in some chunk: nothing is lost
    assert {i for i, line in enumerate(numbered, 1) if line.strip()} <= covered


@pytest.mark.parametrize(
    ("text", "chunk_tokens", "expected"),
    [
        # the headings above a chunk it does not show, outermost first
        ("# 2026-01-20\n## API\n" + "a few words on one line\n" * 40, 60, ["", *["2026-01-20 / API"] * 4]),
        # a heading line gets only its parents: a sibling section does not leak in
        ("# Day\n## Morning\n" + "coffee and notes\n" * 8 + "## Evening\ny\n", 40, ["", "Day / Morning", "Day"]),
        # a '#' line in a code fence is code, not a heading
        ("# Notes\n```\n# not a heading\n```\n" + "a few words on one line\n" * 20, 60, ["", "Notes", "Notes"]),
    ],
)
def test_a_chunk_knows_the_headings_above_it(text: str, chunk_tokens: int, expected: list[str]) -> None:
    chunks = chunk_markdown(text, chunk_tokens=chunk_tokens, overlap_tokens=0)
    assert [c.context for c in chunks] == expected, [(c.start_line, c.end_line) for c in chunks]
