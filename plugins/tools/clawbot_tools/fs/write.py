"""``write``: create or replace a file in the workspace, atomically."""

from __future__ import annotations

import os
from collections.abc import Sequence

from clawbot import Tool, ToolCall, ToolResult

from clawbot_tools.calls import schema
from clawbot_tools.config import ToolsSettings
from clawbot_tools.fs.atomic import atomic_write
from clawbot_tools.fs.common import GROUP, os_error, refused
from clawbot_tools.fs.paths import PathRefused, confinement_root, display, refuse_directory_name, resolve
from clawbot_tools.read_only import refusal

PARAMETERS = schema(
    {
        "path": {"type": "string", "description": "File to write, relative to the workspace. Missing parent directories are created."},
        "content": {"type": "string", "description": "The complete new content of the file (UTF-8)."},
    },
    ["path", "content"],
)


def make_tool(settings: ToolsSettings, hidden: Sequence[str] = ()) -> Tool:
    """``hidden``: folders it refuses wherever they are (:func:`~clawbot_tools.fs.paths.hidden_folders`)."""

    def handler(call: ToolCall) -> ToolResult:
        return write(call, settings, hidden)

    return Tool(
        name="write",
        description=("Create a file or replace its whole content. Parent directories are created as needed. To change part of an existing file, prefer edit."),
        parameters=PARAMETERS,
        handler=handler,
        summary="Create or overwrite a file in the workspace (creates parent directories)",
        group=GROUP,
        profiles=("coding",),
        order=110,
        concurrent=False,  # writes a file: runs alone, after the calls before it
    )


def write(call: ToolCall, settings: ToolsSettings, hidden: Sequence[str] = ()) -> ToolResult:
    if (read_only := refusal(call)) is not None:
        return read_only
    raw = call.arguments.get("path")
    content = call.arguments.get("content")
    if not isinstance(content, str):
        return ToolResult.error("write: content must be a string")
    try:
        path = resolve(call, raw, settings, for_write=True, hidden=hidden)
        refuse_directory_name(raw)
    except PathRefused as exc:
        return refused("write", exc, raw)
    shown = display(call, path)
    if path.is_dir():
        return ToolResult.error(f"write: {shown} is a directory; give a file path", path=shown)
    data = content.encode("utf-8", "surrogatepass")
    existed = path.exists()
    try:
        atomic_write(path, data, root=confinement_root(call, settings), create_dirs=True)
    except PathRefused as exc:
        return refused("write", exc, raw)
    except OSError as exc:
        return os_error("write", shown, exc)
    verb = "Overwrote" if existed else "Wrote"
    return ToolResult.text(f"{verb} {shown} ({len(data)} bytes)", path=shown, bytes=len(data), created=not existed, mode=oct(os.stat(path).st_mode & 0o777))
