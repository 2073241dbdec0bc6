"""Readable text from fetched bodies: HTML to light markdown, JSON pretty-printed."""

from __future__ import annotations

import contextlib
import json
import re
from html.parser import HTMLParser
from urllib.parse import urljoin

SKIP_TAGS = frozenset(
    {
        "script",
        "style",
        "nav",
        "header",
        "footer",
        "noscript",
        "template",
        "svg",
        "iframe",
        "title",
    }
)
BLOCK_TAGS = frozenset(
    {
        "p",
        "div",
        "section",
        "article",
        "main",
        "aside",
        "blockquote",
        "pre",
        "ul",
        "ol",
        "dl",
        "table",
        "tr",
        "figure",
        "figcaption",
        "hr",
        "address",
        "details",
        "summary",
        "dt",
        "dd",
    }
)
HEADINGS = {f"h{n}": n for n in range(1, 7)}
VOID_TAGS = frozenset(
    {
        "br",
        "hr",
        "img",
        "input",
        "meta",
        "link",
        "area",
        "base",
        "col",
        "embed",
        "source",
        "wbr",
    }
)

_BLANKS = re.compile(r"\n[ \t]*\n(?:[ \t]*\n)+")
_SPACES = re.compile(r"[ \t\r\f\v]+")


class _Extractor(HTMLParser):
    def __init__(self, base_url: str) -> None:
        super().__init__(convert_charrefs=True)
        self.base_url = base_url
        self.out: list[str] = []
        self.skip = 0
        self.pre = 0
        self.title = ""
        self._in_title = False
        self._links: list[tuple[str | None, int]] = []  # (href, start index into out)

    # -- helpers -----------------------------------------------------------------------
    def _block(self) -> None:
        self.out.append("\n\n")

    def _line(self) -> None:
        self.out.append("\n")

    # -- parser callbacks --------------------------------------------------------------
    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "title":
            self._in_title = True
        if tag in SKIP_TAGS:
            if tag not in VOID_TAGS:
                self.skip += 1
            return
        if self.skip:
            return
        if tag in HEADINGS:
            self._block()
            self.out.append("#" * HEADINGS[tag] + " ")
        elif tag == "li":
            self._line()
            self.out.append("- ")
        elif tag == "br":
            self._line()
        elif tag in ("td", "th"):
            self.out.append(" | ")
        elif tag in BLOCK_TAGS:
            self._block()
            if tag == "pre":
                self.pre += 1
        elif tag == "a":
            href = dict(attrs).get("href")
            self._links.append((href, len(self.out)))

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in VOID_TAGS or tag in SKIP_TAGS:
            if not self.skip and tag == "br":
                self._line()
            return
        self.handle_starttag(tag, attrs)
        self.handle_endtag(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False
        if tag in SKIP_TAGS:
            if self.skip:
                self.skip -= 1
            return
        if self.skip:
            return
        if tag in HEADINGS or tag in BLOCK_TAGS:
            if tag == "pre" and self.pre:
                self.pre -= 1
            self._block()
        elif tag == "a" and self._links:
            href, start = self._links.pop()
            text = " ".join("".join(self.out[start:]).split())
            del self.out[start:]
            if href and not href.strip().lower().startswith(("javascript:", "data:", "#")) and text:
                self.out.append(f"[{text}]({urljoin(self.base_url, href.strip())})")
            else:
                self.out.append(text)

    def handle_data(self, data: str) -> None:
        if self._in_title and not self.title:
            self.title = " ".join(data.split())
        if self.skip:
            return
        self.out.append(data if self.pre else _SPACES.sub(" ", data.replace("\n", " ")))


def html_to_text(html: str, base_url: str = "") -> tuple[str, str]:
    """``(title, text)`` of an HTML document; scripts, styles and page chrome are dropped."""
    parser = _Extractor(base_url)
    # html.parser is lenient; malformed markup must never fail a fetch.
    with contextlib.suppress(Exception):
        parser.feed(html)
        parser.close()
    text = "".join(parser.out)
    lines = [line.strip() if not line.startswith("    ") else line.rstrip() for line in text.split("\n")]
    text = _BLANKS.sub("\n\n", "\n".join(lines)).strip()
    return parser.title, text


def json_to_text(raw: str) -> str:
    """Pretty-printed JSON, or the raw text if it does not parse (e.g. truncated)."""
    try:
        return json.dumps(json.loads(raw), indent=2, ensure_ascii=False)
    except ValueError:
        return raw
