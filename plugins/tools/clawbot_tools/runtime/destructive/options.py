"""How the rules read a command's words: option letters, long options, operands and
leading ``NAME=value`` assignments.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*+=")


def _options(args: Sequence[str], values: str = "", *, dashdash: bool = True) -> tuple[set[str], list[str]]:
    """(short option letters and long options, operands) of ``args``.

    ``values``: short options that take a value (the rest of their cluster, or the next
    word). ``dashdash``: ``--`` ends the options (the scan ignores it).
    """
    flags: set[str] = set()
    operands: list[str] = []
    skip = False
    for i, arg in enumerate(args):
        if skip:
            skip = False
            continue
        if arg == "--" and dashdash:
            operands.extend(args[i + 1 :])
            break
        if arg.startswith("--"):
            flags.add(arg.split("=", 1)[0])
        elif arg.startswith("-") and len(arg) > 1:
            for j, letter in enumerate(arg[1:], 1):
                flags.add(letter)
                if letter in values:
                    skip = j == len(arg) - 1
                    break
        else:
            operands.append(arg)
    return flags, operands


def _has_long(flags: set[str], *names: str) -> bool:
    """Whether a long option in ``flags`` abbreviates one of ``names`` (three characters or more)."""
    return any(len(flag) >= 3 and flag.startswith("--") and any(name.startswith(flag) for name in names) for flag in flags)
