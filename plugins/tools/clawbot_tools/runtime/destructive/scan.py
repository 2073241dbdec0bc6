"""The token scan: destructive words anywhere in the raw text, however quoted, escaped or
split (quotes and backslashes dropped, ``$'...'`` and ``\\xHH`` / octal escapes decoded,
globbed names matched); the rules then judge the words found.
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Iterable

from clawbot_tools.runtime.destructive.git import GIT_ALIAS, _git_sub_labels
from clawbot_tools.runtime.destructive.rules import (
    FORMATTERS,
    PARTITIONERS,
    POWER,
    labels_of,
)

_SCAN_SPLIT = re.compile(r"[\s;|&()<>`]++")
_FINE_SPLIT = re.compile(r"[${},=:]++")
_EXPANSION_OPERATORS = "-+?=#%/^,"
_ESCAPE = re.compile(r"\\(?:x[0-9A-Fa-f]{1,2}|u[0-9A-Fa-f]{1,4}|U[0-9A-Fa-f]{1,8}|0?[0-7]{1,3}|c.|.)", re.S)
_SIMPLE_ESCAPES = {"a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v"}
# names the scan looks for (also matched by globs: /bin/r? -rf)
SCAN_NAMES = frozenset(
    {
        "rm",
        "mkfs",
        "mkfs.ext4",
        "mkfs.xfs",
        "mkfs.vfat",
        "mkfs.btrfs",
        *FORMATTERS,
        "dd",
        "shred",
        "blkdiscard",
        *POWER,
        "init",
        "telinit",
        "systemctl",
        *PARTITIONERS,
        "chmod",
        "chown",
        "chgrp",
        "git",
        "find",
        "tee",
    }
)
GIT_SUBCOMMANDS = frozenset(
    {
        "push",
        "reset",
        "clean",
        "branch",
        "checkout",
        "restore",
        "stash",
        "reflog",
        "gc",
        "prune",
        "filter-branch",
        "filter-repo",
        "update-ref",
        "config",
    }
)
SCAN_WINDOW = 16  # words judged after a program or git subcommand found by the scan
MAX_SCAN_HITS = 256  # more windows than this on one line: it asks without looking further
MAX_GLOBS = 128
# what the scan could find something in: a name it looks for, an escape or a glob
_MAY_HIDE = re.compile("|".join(sorted({re.escape(name) for name in SCAN_NAMES | GIT_SUBCOMMANDS} | {"mkfs", r"[*?\[]"}, key=len, reverse=True)))
# expansions that may be empty: r${x}m, r$@m
_EMPTY_EXPANSION = re.compile(r"\$\{[^{}]{0,64}+\}|\$[@*#?!$0-9-]")


def _squash(text: str) -> str:
    """``text`` without quotes and possibly empty expansions (``"r"'m'``, ``r${x}m`` -> ``rm``)."""
    return _EMPTY_EXPANSION.sub("", text.replace("'", "").replace('"', ""))


def scan_tokens(text: str) -> list[str]:
    """The words of ``text`` for the scan, from four views of it: quotes as breaks; quotes and
    possibly empty expansions dropped; escapes decoded; quotes and backslashes dropped."""
    plain = text.replace("\\\n", "").replace("'", " ").replace('"', " ")
    views = [
        plain.replace("\\", ""),
        _squash(text).replace("\\", ""),
        _ESCAPE.sub(_unescape, text.replace("\\\n", "")).replace("'", "").replace('"', ""),
        text.replace("'", "").replace('"', "").replace("\\", ""),
    ]
    tokens: list[str] = []
    for view in views:
        for token in _SCAN_SPLIT.split(view):
            if not token:
                continue
            tokens.append(token)
            if _FINE_SPLIT.search(token):
                for piece in _FINE_SPLIT.split(token):
                    if piece:
                        tokens.append(piece)
                        if piece[0] in _EXPANSION_OPERATORS and "${" in token:
                            tokens.append(piece.lstrip(_EXPANSION_OPERATORS))  # ${c:-rm} -> rm
    return tokens


def _unescape(match: re.Match[str]) -> str:
    body = match.group()[1:]
    head = body[0]
    try:
        if head == "x" and len(body) > 1:
            return chr(int(body[1:], 16))
        if head in "uU" and len(body) > 1:
            return chr(int(body[1:], 16))
        if head in "01234567":
            return chr(int(body, 8) & 0xFF)
    except (ValueError, OverflowError):
        return ""
    if head == "c" and len(body) > 1:
        return chr(ord(body[1]) & 0x1F)
    return _SIMPLE_ESCAPES.get(head, head)


def scan(text: str) -> list[str]:
    """Destructive words anywhere in ``text``, however they are quoted, escaped or split."""
    tokens = scan_tokens(text)
    labels: list[str] = []

    def add(new: Iterable[str]) -> None:
        for label in new:
            if label not in labels:
                labels.append(label)

    bases = [os.path.basename(token) for token in tokens]
    present: set[str] = set()
    globs: set[str] = set()
    for base in bases:
        if base in SCAN_NAMES or base.startswith("mkfs") or base in GIT_SUBCOMMANDS:
            present.add(base)
        elif ("*" in base or "?" in base or "[" in base) and any(ch.isalpha() for ch in base) and len(base) <= 40:
            globs.add(base)
    if len(globs) > MAX_GLOBS:
        return ["too many globbed words to check"]
    for pattern in globs:
        present.update(name for name in SCAN_NAMES if fnmatch.fnmatchcase(name, pattern))
    # rules that hold anywhere on the line
    for name in present & {"rm", "chmod", "chown", "chgrp", "dd", "find", "tee", *PARTITIONERS, *POWER, *FORMATTERS, "shred", "blkdiscard"}:
        add(labels_of(name, tokens, tokens, loose=True))
    if any(name.startswith("mkfs") for name in present):
        add(["mkfs (formats a disk)"])
    # rules that depend on the words after the program: a window at each place
    windowed = present & {"init", "telinit", "systemctl"}
    git_subs = (present & GIT_SUBCOMMANDS) if "git" in present else set()
    if "git" in present and any(token.lower().startswith("alias.") or "alias." in token.lower() for token in tokens):
        add([GIT_ALIAS])
    if windowed or git_subs:
        hits = 0
        for k, base in enumerate(bases):
            if base in windowed:
                window = tokens[k + 1 : k + 1 + SCAN_WINDOW]
                found = labels_of(base, window, window, loose=True)
            elif base in git_subs:
                found = _git_sub_labels(base, tokens[k + 1 : k + 1 + SCAN_WINDOW])
            else:
                continue
            hits += 1
            if hits > MAX_SCAN_HITS:
                add(["too many commands to check"])
                break
            add(found)
    return labels
