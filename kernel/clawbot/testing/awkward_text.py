"""Strings that any writer of model, tool or channel text to disk must store and read back.

Each is a valid Python ``str`` that a careless writer fails on or changes: a lone surrogate
cannot be encoded as UTF-8, NUL and separators break naive line formats, an escape written
as text must not be decoded, and a huge one must not be cut.
"""

from __future__ import annotations

AWKWARD_TEXT: dict[str, str] = {
    "lone high surrogate": "a\ud800b",
    "lone low surrogate": "\udfff",
    "surrogates in the wrong order": "\udc00\ud800",
    "a real pair next to a lone half": "\U0001f600\ud83d",
    "NUL and controls": "\x00\x01\x1b[2J\x7f",
    "noncharacters": "\uffff\ufffe\U0010ffff",
    "line and paragraph separators": "one\u2028two\u2029three\r\nfour",
    "an escape written as text": "\\ud800 and \\u0000",
    "bidi and zero-width": "\u202eevil\u200b\ufeff",
    "huge with a surrogate at the end": "x" * 1_000_000 + "\ud800",
    "empty": "",
}
