"""The model's Markdown as Telegram HTML: escaped, formatted, and cut into messages that fit."""

from __future__ import annotations

import html
import re

import pytest
from clawbot_telegram.render import notice_messages, plain_messages, to_messages
from hypothesis import given, settings
from hypothesis import strategies as st

CASES = {
    "escapes": ("a < b & c > d", "a &lt; b &amp; c &gt; d"),
    "bold, italic, strike": ("**b** *i* _j_ ~~s~~", "<b>b</b> <i>i</i> <i>j</i> <s>s</s>"),
    "snake_case stays": ("use my_var_name", "use my_var_name"),
    "inline code is verbatim": ("`a**b**<c>`", "<code>a**b**&lt;c&gt;</code>"),
    "link": ("[docs](https://x.org/?a=1&b=2)", '<a href="https://x.org/?a=1&amp;b=2">docs</a>'),
    "script link stays text": ("[x](javascript:alert(1))", "[x](javascript:alert(1))"),
    "heading": ("## Plan", "<b>Plan</b>"),
    "quote": ("> said <this>", "<blockquote>said &lt;this&gt;</blockquote>"),
    "code block": ("```py\nif a<b:\n    **x**\n```", '<pre><code class="language-py">if a&lt;b:\n    **x**</code></pre>'),
}


@pytest.mark.parametrize("case", CASES)
def test_markdown_becomes_telegram_html(case: str) -> None:
    markdown, expected = CASES[case]
    assert [m.html for m in to_messages(markdown)] == [expected]


def test_a_long_code_block_is_cut_into_closed_blocks() -> None:
    code = "```\n" + "\n".join(f"line <{i}> & more" for i in range(1000)) + "\n```"
    messages = to_messages(code)
    assert len(messages) > 1 and all(len(m.html) <= 4096 for m in messages)
    assert all(m.html.startswith("<pre>") and m.html.endswith("</pre>") for m in messages)


def test_notices_mark_every_line() -> None:
    (notice,) = notice_messages("first <x>\nsecond")
    assert notice.html == "<i>[clawbot] first &lt;x&gt;</i>\n<i>[clawbot] second</i>"


def _visible(text: str) -> str:
    return re.sub(r"\s+", "", html.unescape(re.sub(r"<[^>]+>", "", text)))


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet="ab <>&\n.", min_size=0, max_size=12_000))
def test_every_message_fits_and_nothing_is_lost(text: str) -> None:
    messages = to_messages(text, limit=500)
    assert all(len(m.html) <= 500 for m in messages)
    quoted_marks_taken = re.sub(r"(?m)^>", "", text)  # a line's leading ">" makes it a quote
    assert "".join(_visible(m.html) for m in messages) == re.sub(r"\s+", "", quoted_marks_taken)
    assert all(len(p) <= 500 for m in messages for p in plain_messages(m.plain, 500))
