"""``find``: files whose path matches a glob pattern."""

from __future__ import annotations

import os
from pathlib import Path

from clawbot import Tool, ToolCall, ToolResult
from clawbot.globs import GlobError, compile_glob

from clawbot_tools.calls import schema
from clawbot_tools.config import ToolsSettings
from clawbot_tools.fs.common import GROUP, int_arg, os_error, refused
from clawbot_tools.fs.paths import PathRefused, display, resolve
from clawbot_tools.fs.walk import walk_entries

DEFAULT_MAX = 200
MAX_RESULTS = 2000
SCAN_LIMIT = 100_000

PARAMETERS = schema(
    {
        "pattern": {
            "type": "string",
            "description": "Glob relative to path, e.g. '**/*.py' (recursive) or '*.md' (top level only); '**' spans directories.",
        },
        "path": {"type": "string", "description": "Directory to search, relative to the workspace. Default '.'."},
        "max_results": {"type": "integer", "minimum": 1, "description": f"Most paths to return. Default {DEFAULT_MAX}."},
    },
    ["pattern"],
)


def make_tool(settings: ToolsSettings) -> Tool:
    def handler(call: ToolCall) -> ToolResult:
        return find(call, settings)

    return Tool(
        name="find",
        description=(
            "Find files and directories matching a glob pattern under a directory. Results are paths relative to the "
            "workspace, sorted, directories with a trailing '/'. .git is skipped; symlinked directories are not entered."
        ),
        parameters=PARAMETERS,
        handler=handler,
        summary="Find workspace files by glob pattern, e.g. '**/*.py'",
        group=GROUP,
        profiles=("coding",),
        order=150,
        concurrent=True,  # lists only
    )


def find(call: ToolCall, settings: ToolsSettings) -> ToolResult:
    pattern = call.arguments.get("pattern")
    raw = call.arguments.get("path", ".")
    if not isinstance(pattern, str) or not pattern.strip():
        return ToolResult.error("find: pattern must be a non-empty glob such as '**/*.py'")
    if "\x00" in pattern:
        return ToolResult.error("find: pattern contains a NUL byte")
    if pattern.startswith(("/", "~")) or ".." in pattern.split("/"):
        return ToolResult.error(
            f"find: pattern {pattern!r} reaches outside the workspace; give a pattern relative to path (and path inside the workspace)",
            pattern=pattern,
            refused=True,
        )
    try:
        matches = compile_glob(pattern)
    except GlobError as exc:
        return ToolResult.error(f"find: {exc}", pattern=pattern)
    try:
        top = resolve(call, raw, settings)
        limit = int_arg(call.arguments, "max_results", DEFAULT_MAX, minimum=1, maximum=MAX_RESULTS)
    except PathRefused as exc:
        return refused("find", exc, raw)
    except ValueError as exc:
        return ToolResult.error(f"find: {exc}")
    shown = display(call, top)
    if not top.is_dir():
        return ToolResult.error(f"find: {shown} is not a directory", path=shown)
    found: list[str] = []
    scanned = 0
    top_str = os.fspath(top)
    try:
        for full, is_dir in walk_entries(top_str):
            scanned += 1
            if scanned > SCAN_LIMIT:
                break
            rel = os.path.relpath(full, top_str).replace(os.sep, "/")
            if matches(rel):
                out = display(call, Path(full))
                found.append(out + ("/" if is_dir else ""))
    except OSError as exc:
        return os_error("find", shown, exc)
    found.sort()
    total = len(found)
    if total == 0:
        return ToolResult.text(f"No paths match {pattern!r} under {shown}", pattern=pattern, path=shown, matches=0)
    text = "\n".join(found[:limit])
    notes = []
    if total > limit:
        notes.append(f"{total - limit} more matches not shown; narrow the pattern or raise max_results")
    if scanned > SCAN_LIMIT:
        notes.append(f"stopped after scanning {SCAN_LIMIT} entries; search a smaller directory")
    if notes:
        text += f"\n[... {'; '.join(notes)}]"
    return ToolResult.text(text, pattern=pattern, path=shown, matches=total, truncated=bool(notes))
