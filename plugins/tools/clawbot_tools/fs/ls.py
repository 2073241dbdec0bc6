"""``ls``: the entries of one directory, sorted, with sizes."""

from __future__ import annotations

import os
import stat

from clawbot import Tool, ToolCall, ToolResult

from clawbot_tools.calls import schema
from clawbot_tools.config import ToolsSettings
from clawbot_tools.fs.common import GROUP, os_error, refused
from clawbot_tools.fs.paths import PathRefused, confinement_root, display, inside, resolve

MAX_ENTRIES = 500
OUTSIDE = "(outside workspace)"

PARAMETERS = schema(
    {"path": {"type": "string", "description": "Directory to list, relative to the workspace. Default '.'."}},
    [],
)


def make_tool(settings: ToolsSettings) -> Tool:
    def handler(call: ToolCall) -> ToolResult:
        return ls(call, settings)

    return Tool(
        name="ls",
        description=(
            "List a directory: one entry per line, sorted, directories with a trailing '/', files with their size "
            f"in bytes, symlinks as 'name -> target' ('-> (outside workspace)' when the target is). At most {MAX_ENTRIES} entries."
        ),
        parameters=PARAMETERS,
        handler=handler,
        summary="List a workspace directory (sorted, dirs end in '/', sizes in bytes)",
        group=GROUP,
        profiles=("coding",),
        order=160,
        concurrent=True,  # lists only
    )


def _describe(directory: str, name: str, root: str | None) -> tuple[str, bool]:
    full = os.path.join(directory, name)
    info = os.lstat(full)
    if stat.S_ISLNK(info.st_mode):
        return f"{name} -> {_link_target(full, root)}", False
    if stat.S_ISDIR(info.st_mode):
        return f"{name}/", True
    return f"{name}  ({info.st_size} bytes)", False


def _link_target(full: str, root: str | None) -> str:
    try:
        target = os.readlink(full)
    except OSError:
        return "?"
    if root is not None and not inside(root, os.path.realpath(full)):
        return OUTSIDE  # the target's path says where things are outside: not the model's business
    return target


def ls(call: ToolCall, settings: ToolsSettings) -> ToolResult:
    raw = call.arguments.get("path", ".")
    try:
        path = resolve(call, raw, settings)
    except PathRefused as exc:
        return refused("ls", exc, raw)
    shown = display(call, path)
    if not path.exists():
        return ToolResult.error(f"ls: {shown} not found", path=shown)
    if not path.is_dir():
        return ToolResult.error(f"ls: {shown} is a file, not a directory; use read to see it", path=shown)
    root = confinement_root(call, settings)
    try:
        names = sorted(os.listdir(path))
        lines: list[str] = []
        dirs = 0
        for name in names[:MAX_ENTRIES]:
            try:
                line, is_dir = _describe(os.fspath(path), name, root)
            except FileNotFoundError:
                continue  # vanished while listing
            lines.append(line)
            dirs += is_dir
    except OSError as exc:
        return os_error("ls", shown, exc)
    if not names:
        return ToolResult.text(f"({shown} is empty)", path=shown, entries=0, truncated=False)
    text = "\n".join(lines)
    truncated = len(names) > MAX_ENTRIES
    if truncated:
        text += f"\n[... {len(names) - MAX_ENTRIES} more entries not shown; use find with a pattern to narrow down]"
    return ToolResult.text(text, path=shown, entries=len(names), directories=dirs, truncated=truncated)
