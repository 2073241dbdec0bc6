"""``grep``: lines matching a regular expression, as ``path:line: text``."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

from clawbot import Tool, ToolCall, ToolResult
from clawbot.globs import GlobError, compile_glob

from clawbot_tools.calls import schema
from clawbot_tools.config import ToolsSettings
from clawbot_tools.fs.common import GROUP, int_arg, os_error, refused
from clawbot_tools.fs.paths import PathRefused, confinement_root, display, is_inside_workspace, resolve
from clawbot_tools.fs.pattern import PatternError, compile_pattern
from clawbot_tools.fs.search import MAX_SEARCH_CHARS, FileSearch, PatternTooSlow
from clawbot_tools.fs.walk import walk_files

DEFAULT_MAX = 100
MAX_RESULTS = 1000
MAX_FILES = 20_000  # files searched
MAX_SCANNED = 100_000  # files walked past, matching the glob or not
# the whole call stops here with what it found (the kernel's tool timeout is longer, and a
# worker thread cannot be killed when that fires)
TIME_BUDGET_S = 30.0

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
            "workspace. Binary files, files over 5 MB and .git are skipped; long lines are shortened. A pattern that "
            "backtracks too long on one line stops the search with an error."
        ),
        parameters=PARAMETERS,
        handler=handler,
        summary="Search workspace files for a regex; results as 'path:line: text'",
        group=GROUP,
        profiles=("coding",),
        order=140,
        concurrent=True,  # reads only
    )


def _file_filter(glob: str | None) -> Callable[[str], bool]:
    if not glob:
        return lambda rel: True
    matches = compile_glob(glob)
    if "/" in glob:
        return matches
    return lambda rel: matches(rel.rsplit("/", 1)[-1])


def grep(call: ToolCall, settings: ToolsSettings) -> ToolResult:
    pattern = call.arguments.get("pattern")
    raw = call.arguments.get("path", ".")
    glob = call.arguments.get("glob")
    if not isinstance(pattern, str) or pattern == "":
        return ToolResult.error("grep: pattern must be a non-empty regular expression")
    if glob is not None and not isinstance(glob, str):
        return ToolResult.error("grep: glob must be a string")
    try:
        regex = compile_pattern(pattern, ignore_case=bool(call.arguments.get("ignore_case")))
        wanted = _file_filter(glob)
    except PatternError as exc:
        return ToolResult.error(f"grep: {exc}", pattern=pattern)
    except GlobError as exc:
        return ToolResult.error(f"grep: {exc}", pattern=pattern, glob=glob)
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
    top_str = os.fspath(top)
    base = top_str if top.is_dir() else os.path.dirname(top_str)
    search = FileSearch(regex, confinement_root(call, settings), time.monotonic() + TIME_BUDGET_S)
    scanned = files_searched = files_skipped = 0
    stopped = ""
    try:
        for full in walk_files(top_str):
            scanned += 1
            if files_searched >= MAX_FILES or scanned > MAX_SCANNED:
                stopped = f"stopped after {files_searched} files searched ({scanned - 1} looked at); give a smaller path or a glob"
                break
            if search.out_of_time():
                stopped = f"stopped after {TIME_BUDGET_S:g} s; give a smaller path or a glob"
                break
            if glob and not wanted(os.path.relpath(full, base).replace(os.sep, "/")):
                continue
            if os.path.islink(full) and not is_inside_workspace(call, full, settings):
                files_skipped += 1
                continue
            # the shown path is only built for files that match (most do not)
            if search.file(full, lambda full=full: display(call, Path(full)), limit) is None:
                files_skipped += 1
                continue
            files_searched += 1
            if len(search.results) >= limit:
                stopped = f"stopped at {limit} matches; narrow the pattern, path or glob, or raise max_results"
                break
    except PatternTooSlow as exc:
        return _too_slow(pattern, shown, exc, search.results, files_searched)
    except OSError as exc:
        return os_error("grep", shown, exc)
    if search.timed_out and not stopped:
        stopped = f"stopped after {TIME_BUDGET_S:g} s; give a smaller path or a glob"
    matches = len(search.results)
    details = {"pattern": pattern, "path": shown, "matches": matches, "files_searched": files_searched, "files_skipped": files_skipped}
    notes = [stopped] if stopped else []
    if search.long_lines:
        notes.append(f"{search.long_lines} lines longer than {MAX_SEARCH_CHARS} characters were searched only that far")
    if not search.results:
        text = f"No matches for {pattern!r} in {shown} ({files_searched} files searched)"
    else:
        text = "\n".join(search.results)
    if notes:
        text += f"\n[... {'; '.join(notes)}]"
    return ToolResult.text(text, truncated=bool(stopped), **details)


def _too_slow(pattern: str, shown: str, exc: PatternTooSlow, results: list[str], files_searched: int) -> ToolResult:
    text = (
        f"grep: the pattern took too long (over {exc.seconds:g} s on {exc.where}) and the search was stopped; "
        "simplify it: avoid nested repetition such as (a+)+ or (.*)*, anchor it, or use a plain word"
    )
    if results:
        text += f"\nMatches found before it stopped ({len(results)}):\n" + "\n".join(results)
    return ToolResult.error(text, pattern=pattern, path=shown, matches=len(results), files_searched=files_searched, timed_out=exc.where)
