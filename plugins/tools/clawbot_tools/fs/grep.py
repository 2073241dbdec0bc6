"""``grep``: lines matching a regular expression, as ``path:line: text``."""

from __future__ import annotations

import os
import re
from pathlib import Path

from clawbot import Tool, ToolCall, ToolResult

from clawbot_tools.config import ToolsSettings
from clawbot_tools.fs.common import GROUP, SNIFF_BYTES, int_arg, looks_binary, os_error, refused, schema
from clawbot_tools.fs.paths import PathRefused, display, is_inside_workspace, resolve
from clawbot_tools.fs.walk import glob_regex, walk_files

DEFAULT_MAX = 100
MAX_RESULTS = 1000
MAX_LINE_CHARS = 300
MAX_FILE_BYTES = 5 * 1024 * 1024
MAX_FILES = 20_000

PARAMETERS = schema(
    {
        "pattern": {"type": "string", "description": "Python regular expression to search for."},
        "path": {"type": "string", "description": "File or directory to search, relative to the workspace. Default '.'."},
        "glob": {
            "type": "string",
            "description": "Only search files matching this glob: a name pattern like '*.py' or a path pattern like 'src/**/*.py'.",
        },
        "ignore_case": {"type": "boolean", "description": "Match case-insensitively. Default false."},
        "max_results": {"type": "integer", "minimum": 1, "description": f"Most matching lines to return. Default {DEFAULT_MAX}."},
    },
    ["pattern"],
)


def make_tool(settings: ToolsSettings) -> Tool:
    def handler(call: ToolCall) -> ToolResult:
        return grep(call, settings)

    return Tool(
        name="grep",
        description=(
            "Search files for a regular expression. Each match is 'path:line: text' with the path relative to the "
            "workspace. Binary files, files over 5 MB and .git are skipped; long lines are shortened."
        ),
        parameters=PARAMETERS,
        handler=handler,
        summary="Search workspace files for a regex; results as 'path:line: text'",
        group=GROUP,
    )


def _file_filter(glob: str | None):
    if not glob:
        return lambda rel: True
    regex = glob_regex(glob)
    if "/" in glob:
        return lambda rel: bool(regex.match(rel))
    return lambda rel: bool(regex.match(rel.rsplit("/", 1)[-1]))


def grep(call: ToolCall, settings: ToolsSettings) -> ToolResult:
    pattern = call.arguments.get("pattern")
    raw = call.arguments.get("path", ".")
    glob = call.arguments.get("glob")
    if not isinstance(pattern, str) or pattern == "":
        return ToolResult.error("grep: pattern must be a non-empty regular expression")
    if glob is not None and not isinstance(glob, str):
        return ToolResult.error("grep: glob must be a string")
    flags = re.IGNORECASE if call.arguments.get("ignore_case") else 0
    try:
        regex = re.compile(pattern, flags)
    except re.error as exc:
        return ToolResult.error(f"grep: invalid regular expression {pattern!r}: {exc}", pattern=pattern)
    try:
        top = resolve(call, raw, settings)
        limit = int_arg(call.arguments, "max_results", DEFAULT_MAX, minimum=1, maximum=MAX_RESULTS)
    except PathRefused as exc:
        return refused("grep", exc, raw)
    except ValueError as exc:
        return ToolResult.error(f"grep: {exc}")
    shown = display(call, top)
    if not top.exists():
        return ToolResult.error(f"grep: {shown} not found", path=shown)
    wanted = _file_filter(glob)
    top_str = os.fspath(top)
    base = top_str if top.is_dir() else os.path.dirname(top_str)
    results: list[str] = []
    matches = files_searched = files_skipped = 0
    try:
        for full in walk_files(top_str):
            if files_searched >= MAX_FILES:
                break
            rel = os.path.relpath(full, base).replace(os.sep, "/")
            if not wanted(rel):
                continue
            if os.path.islink(full) and not is_inside_workspace(call, full, settings):
                files_skipped += 1
                continue
            outcome = _search_file(full, regex, display(call, Path(full)), results, limit - matches)
            if outcome is None:
                files_skipped += 1
                continue
            files_searched += 1
            matches += outcome
            if matches >= limit:
                break
    except OSError as exc:
        return os_error("grep", shown, exc)
    details = {"pattern": pattern, "path": shown, "matches": matches, "files_searched": files_searched, "files_skipped": files_skipped}
    if not results:
        return ToolResult.text(f"No matches for {pattern!r} in {shown} ({files_searched} files searched)", **details)
    text = "\n".join(results)
    truncated = matches >= limit
    if truncated:
        text += f"\n[... stopped at {limit} matches; narrow the pattern, path or glob, or raise max_results]"
    return ToolResult.text(text, truncated=truncated, **details)


def _search_file(full: str, regex: re.Pattern[str], shown: str, results: list[str], room: int) -> int | None:
    """Append matches of one file to ``results``; ``None`` when the file was skipped."""
    try:
        if not os.path.isfile(full) or os.path.getsize(full) > MAX_FILE_BYTES:
            return None
        with open(full, "rb") as handle:
            if looks_binary(handle.read(SNIFF_BYTES)):
                return None
        found = 0
        with open(full, encoding="utf-8", errors="replace") as handle:
            for number, line in enumerate(handle, start=1):
                if regex.search(line):
                    text = line.rstrip("\r\n")
                    if len(text) > MAX_LINE_CHARS:
                        text = text[:MAX_LINE_CHARS] + "..."
                    results.append(f"{shown}:{number}: {text}")
                    found += 1
                    if found >= room:
                        break
        return found
    except OSError:
        return None
