"""A reply longer than the channel takes arrives as several messages that each fit, cut at
paragraph breaks first and never leaving a code fence open."""

from __future__ import annotations

import asyncio
import re

import pytest
from clawbot import OutboundEvent
from clawbot.gateway.chunking import chunk_text
from clawbot.gateway.runner import Gateway
from clawbot.testing import FakeChannel, plugin_from_hooks
from clawbot.types import ChannelCapabilities
from hypothesis import example, given, settings
from hypothesis import strategies as st

FENCE_LINE = re.compile(r"^ {0,3}(`{3,}|~{3,})", re.MULTILINE)


def _bodies(pieces: list[str], text: str) -> None:
    """Each piece, the fence lines added at cuts aside, is the next stretch of ``text``, and
    only whitespace lies between them."""
    at = 0
    for index, piece in enumerate(pieces):
        lines = piece.split("\n")
        reopened = index > 0 and bool(FENCE_LINE.match(lines[0]))
        closed = index < len(pieces) - 1 and bool(FENCE_LINE.search(lines[-1]))
        # the fence lines a piece starts or ends with may be the reply's own or added at the cut
        candidates = ["\n".join(lines[int(r) : len(lines) - int(c)]) for r in (reopened, False) for c in (closed, False)]
        # the longest reading that follows on with only whitespace between: a fence line
        # the reply has there belongs to the piece
        valid = [(found + len(body)) for body in candidates if (found := text.find(body, at)) >= 0 and text[at:found].strip() == ""]
        assert valid, (index, piece, text[at : at + 80])
        at = max(valid)
    assert text[at:].strip() == ""


def _balanced(piece: str) -> bool:
    return len(FENCE_LINE.findall(piece)) % 2 == 0


CODE = "```python\n" + "\n".join(f"    value_{i} = compute({i})" for i in range(40)) + "\n```"
CASES = {
    "short enough": ("Hello", 10, ["Hello"]),
    "no limit": ("x" * 10_000, 0, ["x" * 10_000]),
    "at a paragraph break": ("First paragraph.\n\nSecond one here.", 20, ["First paragraph.", "Second one here."]),
    "the last paragraph break that fits": ("aa\n\nbb\n\ncc dd ee", 8, ["aa\n\nbb", "cc dd ee"]),
    "at a line break": ("line one\nline two", 12, ["line one", "line two"]),
    "after a sentence": ("One sentence. Another one here.", 20, ["One sentence.", "Another one here."]),
    "at a space": ("alpha beta gamma delta", 12, ["alpha beta", "gamma delta"]),
    "mid-word as a last resort": ("abcdefghij", 4, ["abcd", "efgh", "ij"]),
}


@pytest.mark.parametrize("case", CASES)
def test_where_a_long_reply_is_cut(case) -> None:
    text, limit, pieces = CASES[case]
    assert chunk_text(text, limit) == pieces


def test_a_code_block_is_closed_and_reopened_with_its_language() -> None:
    text = f"Here is the code:\n\n{CODE}\n\nThat is all."
    pieces = chunk_text(text, 300)
    assert len(pieces) > 2
    assert all(len(p) <= 300 and _balanced(p) for p in pieces)
    inside = [p for p in pieces if "value_" in p]
    assert all(p.startswith("```python\n") for p in inside) and all(p.endswith("\n```") for p in inside[:-1])
    assert pieces[0] == "Here is the code:" and pieces[-1].endswith("```\n\nThat is all.")
    _bodies(pieces, text)


WORD = st.sampled_from(["word", "longerword", "x" * 30, "end.", "wow!", " ", "  ", "\n", "\n\n", "\n\n\n", "    indented", "日本語", "\U0001f600"])
BLOCK = st.builds(
    lambda opener, lines: f"{opener}\n" + "\n".join(lines) + "\n" + opener[: 4 if opener.startswith("````") else 3],
    st.sampled_from(["```", "```python", "~~~", "````sh"]),
    st.lists(st.text(alphabet="ab ()=\t", max_size=50), max_size=12),
)


@settings(max_examples=300, deadline=None)
@example(parts=["\n```\n" + "=" * 15 + "\n" + "=" * 15 + "\n\n```\n"], limit=40)  # no piece is an empty code block
@example(parts=["\n```\n" + "=" * 15 + "\n" + "=" * 16 + "\n" + "=" * 16 + "\n```\n"], limit=40)  # a block in three
@given(parts=st.lists(st.one_of(WORD, BLOCK.map(lambda b: f"\n{b}\n")), max_size=40), limit=st.integers(min_value=40, max_value=300))
def test_every_piece_fits_reads_back_as_the_reply_and_keeps_fences_balanced(parts, limit) -> None:
    text = "".join(parts)
    pieces = chunk_text(text, limit)
    assert all(len(p) <= limit for p in pieces), [len(p) for p in pieces]
    assert all(_balanced(p) for p in pieces)
    if len(pieces) > 1:
        assert all(p.strip() for p in pieces)
    _bodies(pieces, text)


async def test_a_long_reply_reaches_the_channel_in_pieces_and_hooks_see_it_whole(make_kernel) -> None:
    seen: list[str] = []
    channel = FakeChannel(capabilities=ChannelCapabilities(max_text_length=4096, media=True))
    reply = "\n\n".join(f"Paragraph {i}: " + " ".join(["lorem ipsum"] * 40) for i in range(20))  # about 10,000 characters

    def sending(event: OutboundEvent):
        seen.append(event.message.text)

    async def respond(message, session_key):
        return reply + "\nMEDIA:https://example.com/x.png"

    kernel = await make_kernel(plugins={"watch": plugin_from_hooks(clawbot_message_sending=sending)})
    gateway = Gateway(kernel, respond, "main")
    task = asyncio.create_task(gateway.run([channel]))
    inbound = await channel.inject("write a lot")
    await channel.inject("/help")  # a notice is cut the same way (it is short here)
    gateway.stop()
    await task
    pieces = [m for m in channel.sent if not m.notice]
    assert seen[0] == reply and len(pieces) == 3
    assert all(len(m.text) <= 4096 for m in channel.sent)
    assert "\n\n".join(m.text for m in pieces) == reply
    assert [m.reply_to_id for m in pieces] == [inbound.message_id, None, None]
    assert [m.media for m in pieces] == [(), (), ("https://example.com/x.png",)]


async def test_a_long_notice_is_cut_too(make_kernel) -> None:
    channel = FakeChannel(capabilities=ChannelCapabilities(max_text_length=60))
    kernel = await make_kernel()

    async def respond(message, session_key):
        raise RuntimeError("boom")

    gateway = Gateway(kernel, respond, "main")
    task = asyncio.create_task(gateway.run([channel]))
    await channel.inject("hi")
    gateway.stop()
    await task
    assert len(channel.sent) > 1 and all(m.notice and len(m.text) <= 60 for m in channel.sent)
