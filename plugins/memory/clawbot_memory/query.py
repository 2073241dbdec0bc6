"""A question -> the FTS5 MATCH expression that finds chunks containing its words."""

from __future__ import annotations

import re

_WORD = re.compile(r"\w+", re.UNICODE)


def keyword_query(text: str) -> str | None:
    """Every word of ``text`` quoted (so no word is read as FTS5 syntax) and ANDed; ``None``
    when the text has no word to search for."""
    words = _WORD.findall(text or "")
    if not words:
        return None
    return " AND ".join('"' + word.replace('"', '""') + '"' for word in words)
