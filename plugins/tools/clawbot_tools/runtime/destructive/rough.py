"""The rough view: the raw text split at every place a command may start (quotes kept), so
commands the analysis cannot take apart (``echo $(rm -rf x)``) are judged too.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable

from clawbot_tools.runtime.destructive.braces import brace_words
from clawbot_tools.runtime.destructive.options import _ASSIGNMENT

# Where a command may start in the raw text.
_ROUGH_SPLIT = re.compile(r"\$\(|[\n;&|()`]")
# Words that may precede the command name in the rough view.
_PREFIX_WORDS = frozenset(
    {
        "!",
        "{",
        "}",
        "if",
        "then",
        "else",
        "elif",
        "do",
        "while",
        "until",
        "time",
        "sudo",
        "doas",
        "xargs",
        "exec",
        "command",
        "env",
        "nice",
        "nohup",
        "stdbuf",
        "eval",
        "busybox",
        "toybox",
    }
)
_COMMAND_AFTER = frozenset({"{", "}", "do", "then", "else", "elif"})


def _rough_commands(text: str) -> Iterable[tuple[str, list[str]]]:
    """(program base name, argument words) at every place a command may start; quotes stay."""
    for piece in _ROUGH_SPLIT.split(text):
        for words in _split_at_keywords(piece.split()):
            start = 0
            while start < len(words) and (words[start] in _PREFIX_WORDS or _ASSIGNMENT.match(words[start])):
                start += 1
            if start < len(words):
                args = [alt for word in words[start + 1 :] for alt in brace_words(word)]
                yield os.path.basename(words[start]), args


def _split_at_keywords(words: list[str]) -> Iterable[list[str]]:
    """``for x do rm -rf y`` -> ``for x`` and ``rm -rf y``: a command may start after these words."""
    current: list[str] = []
    for word in words:
        if word in _COMMAND_AFTER:
            yield current
            current = []
        else:
            current.append(word)
    yield current
