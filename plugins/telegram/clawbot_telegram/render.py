"""The model's Markdown as Telegram's HTML parse mode, in messages that fit.

Telegram takes at most 4096 characters a message, counted after the HTML is parsed, but a
reply that fits as Markdown can grow when ``&``, ``<`` and ``>`` become entities. So the text
is rendered one unit at a time (a line, a code block, a quote) and the units are packed into
messages whose HTML itself fits, which is never longer than what Telegram counts. A unit too
long for one message is cut at line breaks (a code block becomes several ``<pre>`` blocks),
then at spaces; tags are never cut.

Each message keeps the Markdown it came from, sent as plain text when Telegram rejects the
HTML ("can't parse entities"), so what was meant still arrives.
"""

from __future__ import annotations

import html
import re

import attrs

LIMIT = 4096
CAPTION_LIMIT = 1024

_FENCE = re.compile(r"^\s*(```+|~~~+)\s*([\w+#.-]*)")
_HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$")
_QUOTE = re.compile(r"^>\s?(.*)$")
_INLINE = re.compile(
    r"`(?P<code>[^`\n]+)`"
    r"|\[(?P<label>[^\]\n]+)\]\((?P<url>[^)\s]+)\)"
    r"|\*\*(?P<bold>\S(?:.*?\S)?)\*\*"
    r"|(?<!\w)__(?P<bold2>\S(?:.*?\S)?)__(?!\w)"
    r"|~~(?P<strike>\S(?:.*?\S)?)~~"
    r"|(?<![\w*])\*(?P<italic>[^\s*](?:[^*]*?[^\s*])?)\*(?![\w*])"
    r"|(?<![\w_])_(?P<italic2>[^\s_](?:[^_]*?[^\s_])?)_(?![\w_])"
)
_SAFE_SCHEMES = ("http://", "https://", "mailto:", "tg://")


@attrs.frozen
class Piece:
    """One message: its HTML, and the Markdown it was rendered from (the plain fallback)."""

    html: str
    plain: str


def escape(text: str) -> str:
    """Text shown as it is: Telegram's HTML needs ``&``, ``<`` and ``>`` escaped."""
    return html.escape(text, quote=False)


def inline(text: str) -> str:
    """One line of Markdown as HTML: code, links, bold, italic, strikethrough."""
    out: list[str] = []
    at = 0
    for found in _INLINE.finditer(text):
        out.append(escape(text[at : found.start()]))
        at = found.end()
        kind = found.lastgroup
        if found.group("code") is not None:
            out.append(f"<code>{escape(found.group('code'))}</code>")
        elif found.group("label") is not None:
            url = found.group("url")
            if url.lower().startswith(_SAFE_SCHEMES):
                out.append(f'<a href="{html.escape(url, quote=True)}">{inline(found.group("label"))}</a>')
            else:  # a link Telegram would refuse (or a script URL): the text as written
                out.append(escape(found.group(0)))
        else:
            tag = {"bold": "b", "bold2": "b", "strike": "s", "italic": "i", "italic2": "i"}[kind or ""]
            out.append(f"<{tag}>{inline(found.group(kind or ''))}</{tag}>")
    out.append(escape(text[at:]))
    return "".join(out)


@attrs.frozen
class _Unit:
    html: str
    plain: str


def _code_units(lines: list[str], language: str, limit: int) -> list[_Unit]:
    head = f'<pre><code class="language-{escape(language)}">' if language else "<pre>"
    tail = "</code></pre>" if language else "</pre>"
    room = limit - len(head) - len(tail)
    units: list[_Unit] = []
    group: list[str] = []

    def flush() -> None:
        if group:
            body = "\n".join(group)
            units.append(_Unit(head + escape(body) + tail, "\n".join(["```" + language, body, "```"])))
            group.clear()

    for line in lines:
        for part in _cut(line, room, escape):
            if group and len(escape("\n".join([*group, part]))) > room:
                flush()
            group.append(part)
    flush()
    return units


def _quote_units(lines: list[str], limit: int) -> list[_Unit]:
    room = limit - len("<blockquote></blockquote>")
    units: list[_Unit] = []
    group: list[str] = []

    def flush() -> None:
        if group:
            units.append(_Unit("<blockquote>" + "\n".join(inline(line) for line in group) + "</blockquote>", "\n".join("> " + g for g in group)))
            group.clear()

    for line in lines:
        for part in _cut(line, room, inline):
            if group and len("\n".join(inline(g) for g in [*group, part])) > room:
                flush()
            group.append(part)
    flush()
    return units


def _cut(text: str, room: int, render) -> list[str]:  # noqa: ANN001 - str -> str
    """``text`` in parts whose rendering fits ``room``: at spaces, else anywhere."""
    if len(render(text)) <= room:
        return [text]
    parts: list[str] = []
    current = ""
    for word in re.split(r"(?<= )", text):
        if current and len(render(current + word)) > room:
            parts.append(current)
            current = ""
        while len(render(word)) > room:  # one word longer than a message: cut it by characters
            size = room
            while size > 1 and len(render(word[:size])) > room:
                size -= max(1, (len(render(word[:size])) - room) // 5)  # an entity is at most 5 characters
            parts.append(word[:size])
            word = word[size:]
        current += word
    if current:
        parts.append(current)
    return parts


def _units(markdown: str, limit: int) -> list[_Unit]:
    lines = markdown.split("\n")
    units: list[_Unit] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        fence = _FENCE.match(line)
        if fence:
            marker, language = fence.group(1), fence.group(2)
            body: list[str] = []
            i += 1
            while i < len(lines) and not lines[i].strip().startswith(marker):
                body.append(lines[i])
                i += 1
            i += 1  # the closing fence (an unclosed block runs to the end)
            units.extend(_code_units(body, language, limit))
            continue
        if _QUOTE.match(line):
            quoted: list[str] = []
            while i < len(lines) and (found := _QUOTE.match(lines[i])):
                quoted.append(found.group(1))
                i += 1
            units.extend(_quote_units(quoted, limit))
            continue
        heading = _HEADING.match(line)
        if heading:
            title = heading.group(1)
            units.extend(_Unit(f"<b>{inline(part)}</b>", part) for part in _cut(title, limit - 7, inline))
        else:
            units.extend(_Unit(inline(part), part) for part in _cut(line, limit, inline))
        i += 1
    return units


def to_messages(markdown: str, limit: int = LIMIT) -> list[Piece]:
    """``markdown`` as Telegram HTML messages of at most ``limit`` characters each."""
    return _pack(_units(markdown, limit), limit)


def _pack(units: list[_Unit], limit: int) -> list[Piece]:
    messages: list[Piece] = []
    html_lines: list[str] = []
    plain_lines: list[str] = []

    def flush() -> None:
        text = "\n".join(html_lines).strip("\n")
        if text.strip():
            messages.append(Piece(text, "\n".join(plain_lines).strip("\n")))
        html_lines.clear()
        plain_lines.clear()

    for unit in units:
        if html_lines and len("\n".join([*html_lines, unit.html])) > limit:
            flush()
        html_lines.append(unit.html)
        plain_lines.append(unit.plain)
    flush()
    return messages


def plain_messages(text: str, limit: int = LIMIT) -> list[str]:
    """``text`` as it is, cut at line breaks (then spaces) into messages of at most ``limit``."""
    messages: list[str] = []
    current: list[str] = []
    for line in text.split("\n"):
        for part in _cut(line, limit, lambda s: s):
            if current and len("\n".join([*current, part])) > limit:
                messages.append("\n".join(current))
                current = []
            current.append(part)
    if current:
        messages.append("\n".join(current))
    return [m for m in messages if m.strip()]


def _notice_line(line: str) -> str:
    from clawbot.types import OutboundMessage

    return f"<i>{escape(OutboundMessage.NOTICE_MARK + (' ' + line if line else ''))}</i>"


def notice_messages(text: str, limit: int = LIMIT) -> list[Piece]:
    """clawbot's own text: every line marked and set in italics, which the model's text never
    gets (the kernel breaks up the mark wherever the model writes it)."""
    room = limit - len(_notice_line(""))
    units = [_Unit(_notice_line(part), part) for line in text.split("\n") for part in _cut(line, room, escape)]
    return _pack(units, limit)
