"""The work behind the hooks: matching block rules, redacting arguments, appending lines.

Appending is safe with concurrent calls, tasks, threads and processes: each line is encoded
first and handed to one ``os.write`` on a descriptor opened with ``O_APPEND``, so the kernel
places every line at the end of the file whole; lines never interleave and never need a lock.
"""

from __future__ import annotations

import fnmatch
import json
import os
import re
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import attrs
from clawbot.statefile import json_text, make_private_dir

from clawbot_tool_audit.config import BlockRule, ToolAuditConfig

REDACTED = "[redacted]"
MAX_VALUE_CHARS = 2_000  # longer strings are cut in the log (a whole file written is not an audit)
DEFAULT_LOG = Path("audit") / "tool-calls.jsonl"


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def resolve_path(value: str, state_dir: Path, env: Mapping[str, str]) -> Path:
    if not value:
        return state_dir / DEFAULT_LOG
    if value == "~" or value.startswith("~/"):
        home = env.get("HOME") or str(Path.home())
        return Path(home + value[1:])
    path = Path(value)
    return path if path.is_absolute() else state_dir / path


# ------------------------------------------------------------------ block rules


@attrs.frozen
class CompiledRule:
    number: int  # 1-based, as the user counts the [[block]] entries
    rule: BlockRule
    regex: re.Pattern[str] | None

    def matches(self, tool: str, arguments: Mapping[str, Any]) -> bool:
        if not fnmatch.fnmatchcase(tool, self.rule.tool):
            return False
        if self.regex is None:
            return True
        if self.rule.argument:
            if self.rule.argument not in arguments:
                return False
            return any(self.regex.search(text) for text in _strings(arguments[self.rule.argument]))
        return any(self.regex.search(text) for text in _strings(arguments))

    def reason(self, tool: str) -> str:
        if self.rule.reason:
            return f"{self.rule.reason} (tool-audit rule {self.number})"
        if self.regex is None:
            return f"tool-audit rule {self.number} does not allow {tool} calls"
        where = f"{self.rule.argument!r} argument matches" if self.rule.argument else "arguments match"
        return f"tool-audit rule {self.number} does not allow {tool} calls whose {where} {self.rule.pattern!r}"


def _strings(value: Any) -> Iterator[str]:
    """Every string inside ``value``; numbers and booleans as their JSON text."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for inner in value.values():
            yield from _strings(inner)
    elif isinstance(value, list | tuple):
        for inner in value:
            yield from _strings(inner)
    elif value is not None:
        yield json.dumps(value)


def compile_rules(rules: list[BlockRule]) -> list[CompiledRule]:
    return [CompiledRule(n, rule, re.compile(rule.pattern) if rule.pattern else None) for n, rule in enumerate(rules, 1)]


# ------------------------------------------------------------------ redaction


def _normal(key: str) -> str:
    return key.lower().replace("-", "_")


def redact(value: Any, keys: tuple[str, ...]) -> Any:
    """``value`` with the values of secret-looking keys replaced and long strings cut."""
    if isinstance(value, Mapping):
        out = {}
        for key, inner in value.items():
            name = _normal(str(key))
            out[str(key)] = REDACTED if any(k in name for k in keys) else redact(inner, keys)
        return out
    if isinstance(value, list | tuple):
        return [redact(inner, keys) for inner in value]
    if isinstance(value, str):
        if len(value) > MAX_VALUE_CHARS:
            return value[:MAX_VALUE_CHARS] + f"…[+{len(value) - MAX_VALUE_CHARS} chars]"
        return value
    if value is None or isinstance(value, bool | int | float):
        return value
    return redact(str(value), keys)


# ------------------------------------------------------------------ the log


class AuditLog:
    """One JSONL file; :meth:`append` writes one line with one ``os.write``."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def append(self, record: Mapping[str, Any]) -> None:
        line = (json_text(record, default=str, separators=(",", ":")) + "\n").encode("utf-8")
        make_private_dir(self.path.parent)  # each folder it creates 0700, not only the last
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            written = os.write(fd, line)
        finally:
            os.close(fd)
        if written != len(line):  # a full disk; never leave half a line unannounced
            raise OSError(f"audit log {self.path}: wrote {written} of {len(line)} bytes")


class Auditor:
    """The configured plugin: rules, redaction and the log, bound to one kernel's settings."""

    def __init__(self, config: ToolAuditConfig, state_dir: Path, env: Mapping[str, str] | None = None) -> None:
        self.config = config
        self.rules = compile_rules(config.block)
        self.redact_keys = tuple(_normal(k) for k in config.redact_keys if k.strip())
        self.log = AuditLog(resolve_path(config.path, state_dir, env or {}))

    def blocking_rule(self, tool: str, arguments: Mapping[str, Any]) -> CompiledRule | None:
        return next((rule for rule in self.rules if rule.matches(tool, arguments)), None)

    def record(
        self,
        *,
        agent: str,
        session: str,
        call_id: str,
        tool: str,
        arguments: Mapping[str, Any],
        outcome: str,
        is_error: bool,
        duration_ms: float | None = None,
        result_chars: int | None = None,
        reason: str | None = None,
    ) -> dict[str, Any]:
        line: dict[str, Any] = {
            "ts": now(),
            "agent": agent,
            "session": session,
            "call_id": call_id,
            "tool": tool,
            "arguments": redact(arguments, self.redact_keys),
            "outcome": outcome,
            "is_error": is_error,
            "duration_ms": None if duration_ms is None else round(duration_ms, 1),
            "result_chars": result_chars,
        }
        if reason is not None:
            line["reason"] = reason
        self.log.append(line)
        return line


def result_chars(result: Any) -> int:
    """How much text a result carried (the log keeps its size, never its content)."""
    total = 0
    for block in getattr(result, "content", ()):
        text = getattr(block, "text", None)
        if isinstance(text, str):
            total += len(text)
    return total
