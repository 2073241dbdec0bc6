"""Small pieces every file tool shares: schemas, argument access, binary sniffing."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from clawbot import ToolResult

from clawbot_tools.fs.paths import PathRefused

GROUP = "fs"
SNIFF_BYTES = 8192
SKIP_DIRS = frozenset({".git"})


def refused(tool: str, exc: PathRefused, raw: object) -> ToolResult:
    return ToolResult.error(f"{tool}: {exc}", path=raw if isinstance(raw, str) else None, refused=True)


def os_error(tool: str, shown: str, exc: OSError) -> ToolResult:
    reason = exc.strerror or str(exc)
    return ToolResult.error(f"{tool}: cannot access {shown}: {reason}", path=shown)


def int_arg(arguments: Mapping[str, Any], name: str, default: int, *, minimum: int, maximum: int) -> int:
    value = arguments.get(name, default)
    if not isinstance(value, int) or isinstance(value, bool):
        raise ValueError(f"{name} must be an integer")
    if value < minimum:
        raise ValueError(f"{name} must be at least {minimum}")
    return min(value, maximum)


def looks_binary(head: bytes) -> bool:
    return b"\x00" in head[:SNIFF_BYTES]
