"""What the model's final reply asks of the channel, and the text of it that goes out.

The model may write directives into a reply; they are read and removed before it is sent
(the transcript keeps the reply as the model wrote it):

* ``[[reply_to_current]]``: send it as a reply to the message being answered;
  ``[[reply_to:<id>]]``: as a reply to message ``<id>``;
* ``[[audio_as_voice]]``: send attached audio as a voice note;
* ``MEDIA:<path-or-url>`` alone on a line: attach that file (a path in the agent's
  workspace) or http(s) link; the line itself is not shown;
* ``HEARTBEAT_OK``: the agent's "nothing needs attention". The token is never shown
  (wherever it is, with any Markdown around it); a
  reply that holds it and at most ``agents.defaults.heartbeat.ack_max_chars`` (300)
  characters of anything else is not sent at all.

Tags and MEDIA lines count only outside code fences: a fenced block is something the model
quotes and goes out as written. A reply that is only a silent token (``NO_REPLY``,
:mod:`clawbot.agent.replies`) is not sent.

:class:`ReplyReader` reads a reply as it streams, so a channel that shows it live never sees
a directive either: a line that may still become a MEDIA line, a ``[[`` that may still
become a tag and a word that may still become ``HEARTBEAT_OK`` are held back until they
cannot; a reply that begins with ``HEARTBEAT_OK`` (and any reply to a heartbeat) is held back until more than
that many other characters came (it is then a real answer). Text shown
before a later ``HEARTBEAT_OK`` cannot be taken back; the token itself never shows.
"""

from __future__ import annotations

import re

import attrs

from clawbot.agent.replies import SILENT_TOKENS, is_silent

HEARTBEAT_TOKEN = "HEARTBEAT_OK"
HEARTBEAT_ACK_MAX_CHARS = 300

_TAG = re.compile(
    r"\[\[[ \t]*(reply_to_current|audio_as_voice|reply_to[ \t]*:[ \t]*([^\]\s]+))[ \t]*\]\][ \t]*",
    re.IGNORECASE,
)
_MEDIA_LINE = re.compile(r"[ \t]*MEDIA:[ \t]*(.*?)[ \t\r]*")
_HEARTBEAT = re.compile(r"[*_`~]*HEARTBEAT_OK[*_`~.!]*[ \t]*")
_FENCE_OPEN = re.compile(r" {0,3}(`{3,}(?=[^`]*$)|~{3,})")
_MARKUP = "*_`~"
_LONGEST_SILENT = max(len(token) for token in SILENT_TOKENS)
_LEAD = 1024
"""How much of a reply's start is looked at for a leading HEARTBEAT_OK."""
_TAG_HOLD = 64
"""A ``[[`` is held back for at most this many characters while it may become a tag."""


@attrs.frozen
class ParsedReply:
    """A reply with its directives read out: ``text`` is what goes out."""

    text: str
    reply_to_current: bool = False
    reply_to: str | None = None
    audio_as_voice: bool = False
    media: tuple[str, ...] = ()
    heartbeat: bool = False
    silent: bool = False
    ack_max_chars: int = HEARTBEAT_ACK_MAX_CHARS
    """At most this much other text beside ``HEARTBEAT_OK``: an acknowledgement, not sent."""

    @property
    def delivered(self) -> bool:
        """Whether anything goes to the chat at all."""
        if self.silent:
            return False
        if self.heartbeat and not self.media and len(self.text) <= self.ack_max_chars:
            return False
        return bool(self.text or self.media)


def parse_reply(raw: str, ack_max_chars: int = HEARTBEAT_ACK_MAX_CHARS) -> ParsedReply:
    reader = ReplyReader(ack_max_chars)
    reader.feed(raw)
    return reader.result()


def _fence_close(opener: str, line: str) -> bool:
    marker = opener.strip()
    stripped = line.strip(" \t\r")
    return len(line) - len(line.lstrip(" ")) <= 3 and len(stripped) >= len(marker) and stripped == marker[0] * len(stripped)


def fence_opener(line: str) -> str | None:
    """The fence marker (```` ``` ```` or ``~~~``, as long as written) a line opens, or ``None``."""
    match = _FENCE_OPEN.match(line)
    return match.group(1) if match else None


def _may_become_silent(text: str) -> bool:
    return any(token.startswith(text) for token in SILENT_TOKENS)


def _heartbeat_led(text: str) -> bool:
    """Whether ``text`` begins with HEARTBEAT_OK, or may still (it is the start of it)."""
    bare = text.lstrip("*_`~")
    return bare.startswith(HEARTBEAT_TOKEN) or HEARTBEAT_TOKEN.startswith(bare)


def _heartbeat_hold(tail: str) -> int:
    """Where the end of ``tail`` that may still be (or end) HEARTBEAT_OK begins."""
    start = len(tail)
    token = tail.rfind(HEARTBEAT_TOKEN)
    if token >= 0 and not tail[token + len(HEARTBEAT_TOKEN) :].strip(_MARKUP + ".!"):
        start = token  # what follows decides whether it is the token
    else:
        for size in range(min(len(tail), len(HEARTBEAT_TOKEN) - 1), 0, -1):
            if HEARTBEAT_TOKEN.startswith(tail[-size:]):
                start = len(tail) - size
                break
    while start > 0 and tail[start - 1] in _MARKUP:
        start -= 1  # markup around the token goes with it
    return start


class ReplyReader:
    """Reads a reply piece by piece: :meth:`shown` is what a live channel may show so far,
    :meth:`result` the whole reply read once it is complete. Each complete line is read
    once, so a long reply costs no more than reading it whole."""

    def __init__(self, ack_max_chars: int = HEARTBEAT_ACK_MAX_CHARS, *, heartbeat: bool = False) -> None:
        self.ack_max_chars = ack_max_chars  # agents.defaults.heartbeat.ack_max_chars
        #: a heartbeat's reply: any short text may still end in HEARTBEAT_OK, so none is shown
        self.hold_short = heartbeat
        self._lines: list[str] = []  # complete lines, cleaned
        self._raw = ""  # the reply so far, for the silent check
        self._tail = ""  # the line still being written
        self._fence: str | None = None
        self._removed = False  # something was taken out: the text is trimmed
        self.reply_to_current = False
        self.reply_to: str | None = None
        self.audio_as_voice = False
        self.media: list[str] = []
        self.heartbeat = False

    def feed(self, piece: str) -> None:
        self._raw += piece
        self._tail += piece
        if "\n" in piece:
            *complete, self._tail = self._tail.split("\n")
            for line in complete:
                self._read_line(line)

    def _read_line(self, line: str) -> None:
        if self._fence is not None:
            if _fence_close(self._fence, line):
                self._fence = None
            self._lines.append(self._drop_heartbeat(line))
            return
        opener = fence_opener(line)
        if opener is not None:
            self._fence = opener
            self._lines.append(self._drop_heartbeat(line))
            return
        line = self._drop_heartbeat(self._take_tags(line))
        media = _MEDIA_LINE.fullmatch(line)
        if media is not None:
            self._removed = True
            if media.group(1):
                self.media.append(media.group(1))
            if self._lines and not self._lines[-1].strip():
                self._lines.pop()  # no double blank line where the MEDIA line was
            return
        self._lines.append(line)

    def _take_tags(self, text: str) -> str:
        def take(match: re.Match[str]) -> str:
            name = match.group(1).lower()
            if name == "reply_to_current":
                self.reply_to_current = True
            elif name == "audio_as_voice":
                self.audio_as_voice = True
            else:
                self.reply_to = match.group(2)
            return ""

        cleaned = _TAG.sub(take, text)
        self._removed = self._removed or cleaned != text
        return cleaned

    def _drop_heartbeat(self, text: str) -> str:
        cleaned = _HEARTBEAT.sub("", text)
        if cleaned != text:
            self.heartbeat = self._removed = True
        return cleaned

    def _settled_tail(self) -> str:
        """The part of the line being written that can no longer become a directive."""
        tail = self._tail
        if self._fence is None:
            start = _HEARTBEAT.sub("", _TAG.sub("", tail)).lstrip(" \t")
            if start.startswith("MEDIA:") or "MEDIA:".startswith(start):
                return ""
            opening = tail.rfind("[[")
            if opening >= 0 and "]]" not in tail[opening:] and len(tail) - opening <= _TAG_HOLD:
                tail = tail[:opening]
            elif tail.endswith("["):
                tail = tail[:-1]
        tail = tail[: _heartbeat_hold(tail)]
        return self._drop_heartbeat(tail if self._fence is not None else self._take_tags(tail))

    def _text(self, tail: str) -> str:
        return "\n".join([*self._lines, tail])

    def shown(self) -> str:
        """What may be shown of the reply so far: always the start of what :meth:`result`
        will send, without the whitespace at its ends."""
        text = self._text(self._settled_tail()).strip()
        if len(text) <= _LONGEST_SILENT and _may_become_silent(text):
            return ""
        lead = self._raw[:_LEAD].lstrip()
        while lead.startswith("[[") and (tag := _TAG.match(lead)) is not None:
            lead = lead[tag.end() :].lstrip()
        if (self.hold_short or _heartbeat_led(lead[: len(HEARTBEAT_TOKEN) + 4])) and len(text) <= self.ack_max_chars:
            return ""  # may still be a heartbeat acknowledgement, which is never shown
        return text

    def result(self) -> ParsedReply:
        """The reply, read whole (call once, when it is complete)."""
        self._read_line(self._tail)
        self._tail = ""
        text = "\n".join(self._lines)
        if self._removed:
            text = text.strip()
        return ParsedReply(
            text=text,
            reply_to_current=self.reply_to_current,
            reply_to=self.reply_to,
            audio_as_voice=self.audio_as_voice,
            media=tuple(self.media),
            heartbeat=self.heartbeat,
            silent=is_silent(self._raw) or is_silent(text),
            ack_max_chars=self.ack_max_chars,
        )
