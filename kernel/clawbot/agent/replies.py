"""Reply tokens the model uses to say "nothing to send".

clawbot's specification and OpenClaw use different spellings (``[[silent]]``, ``__SILENT__``,
``NO_REPLY``); all of them are honoured, but only as the *whole* reply: a real answer that
happens to mention one is sent unchanged.
"""

from __future__ import annotations

SILENT_TOKEN = "[[silent]]"
SILENT_TOKENS = frozenset({SILENT_TOKEN, "__SILENT__", "NO_REPLY"})


def is_silent(text: str | None) -> bool:
    return text is not None and text.strip() in SILENT_TOKENS
