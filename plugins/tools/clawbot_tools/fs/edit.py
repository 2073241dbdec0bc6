"""``edit``: replace one exact piece of text in a file."""

from __future__ import annotations

from collections.abc import Sequence

from clawbot import Tool, ToolCall, ToolResult

from clawbot_tools.calls import schema
from clawbot_tools.config import ToolsSettings
from clawbot_tools.fs.atomic import atomic_write
from clawbot_tools.fs.common import GROUP, os_error, refused
from clawbot_tools.fs.fd import TooLarge, read_limited
from clawbot_tools.fs.paths import PathRefused, confinement_root, display, resolve
from clawbot_tools.read_only import refusal

MAX_EDIT_BYTES = 16 * 1024 * 1024  # the file is held in memory a few times over

PARAMETERS = schema(
    {
        "path": {"type": "string", "description": "File to edit, relative to the workspace."},
        "old_text": {"type": "string", "description": "Exact text to replace; it must occur exactly once in the file."},
        "new_text": {"type": "string", "description": "The replacement text."},
    },
    ["path", "old_text", "new_text"],
)


def make_tool(settings: ToolsSettings, hidden: Sequence[str] = ()) -> Tool:
    """``hidden``: folders it refuses wherever they are (:func:`~clawbot_tools.fs.paths.hidden_folders`)."""

    def handler(call: ToolCall) -> ToolResult:
        return edit(call, settings, hidden)

    return Tool(
        name="edit",
        description=(
            "Replace old_text with new_text in a file. old_text must match the file exactly (whitespace included) "
            "and occur exactly once; include surrounding lines to make it unique."
        ),
        parameters=PARAMETERS,
        handler=handler,
        summary="Replace one exact, unique piece of text in a workspace file",
        group=GROUP,
        profiles=("coding",),
        order=120,
        concurrent=False,  # writes a file: runs alone, after the calls before it
    )


def edit(call: ToolCall, settings: ToolsSettings, hidden: Sequence[str] = ()) -> ToolResult:
    if (read_only := refusal(call)) is not None:
        return read_only
    raw = call.arguments.get("path")
    old_text = call.arguments.get("old_text")
    new_text = call.arguments.get("new_text")
    if not isinstance(old_text, str) or not isinstance(new_text, str):
        return ToolResult.error("edit: old_text and new_text must be strings")
    if old_text == "":
        return ToolResult.error("edit: old_text is empty; give the exact text to replace (use write to create a file)")
    try:
        path = resolve(call, raw, settings, for_write=True, hidden=hidden)
    except PathRefused as exc:
        return refused("edit", exc, raw)
    shown = display(call, path)
    if not path.exists():
        return ToolResult.error(f"edit: {shown} not found; use write to create a new file", path=shown)
    if path.is_dir():
        return ToolResult.error(f"edit: {shown} is a directory", path=shown)
    if not path.is_file():
        return ToolResult.error(f"edit: {shown} is not a regular file", path=shown)
    root = confinement_root(call, settings)
    try:
        data = read_limited(str(path), root, MAX_EDIT_BYTES)
    except TooLarge as exc:
        return ToolResult.error(f"edit: {shown} is too large to edit ({exc.args[0]} bytes; the limit is {MAX_EDIT_BYTES})", path=shown)
    except PathRefused as exc:
        return refused("edit", exc, raw)
    except OSError as exc:
        return os_error("edit", shown, exc)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return ToolResult.error(f"edit: {shown} is not UTF-8 text and cannot be edited", path=shown)
    count = text.count(old_text)
    if count == 0:
        return ToolResult.error(f"edit: old_text not found in {shown}; read the file and copy the exact text", path=shown, matches=0)
    if count > 1:
        return ToolResult.error(
            f"edit: old_text found {count} times in {shown}; include more context so it matches exactly once",
            path=shown,
            matches=count,
        )
    if old_text == new_text:
        return ToolResult.error(f"edit: old_text and new_text are identical; nothing to change in {shown}", path=shown, matches=1)
    updated = text.replace(old_text, new_text, 1)
    encoded = updated.encode("utf-8")
    try:
        atomic_write(path, encoded, root=root)
    except PathRefused as exc:
        return refused("edit", exc, raw)
    except OSError as exc:
        return os_error("edit", shown, exc)
    line = text[: text.index(old_text)].count("\n") + 1
    return ToolResult.text(
        f"Edited {shown} at line {line} ({len(data)} -> {len(encoded)} bytes)",
        path=shown,
        matches=1,
        line=line,
        bytes=len(encoded),
    )
