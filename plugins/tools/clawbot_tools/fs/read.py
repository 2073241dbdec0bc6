"""``read``: a slice of a text file, or an image as an image block."""

from __future__ import annotations

import base64
import os

from clawbot import ImageBlock, TextBlock, Tool, ToolCall, ToolResult

from clawbot_tools.config import ToolsSettings
from clawbot_tools.fs.common import GROUP, SNIFF_BYTES, int_arg, looks_binary, os_error, refused, schema
from clawbot_tools.fs.paths import PathRefused, display, resolve

DEFAULT_LIMIT = 2000
MAX_LIMIT = 100_000
MAX_CHARS = 50_000
MAX_IMAGE_BYTES = 10 * 1024 * 1024

PARAMETERS = schema(
    {
        "path": {"type": "string", "description": "File to read, relative to the workspace."},
        "offset": {"type": "integer", "minimum": 1, "description": "First line to return (1-based). Default 1."},
        "limit": {"type": "integer", "minimum": 1, "description": f"How many lines to return. Default {DEFAULT_LIMIT}."},
    },
    ["path"],
)


def image_type(head: bytes) -> str | None:
    """The media type of a PNG, JPEG, GIF or WebP image, judged by its magic bytes."""
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if head.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if head.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    return None


def make_tool(settings: ToolsSettings) -> Tool:
    def handler(call: ToolCall) -> ToolResult:
        return read(call, settings)

    return Tool(
        name="read",
        description=(
            "Read a file in the workspace. Text files come back as text; when more lines remain the result ends "
            "with a note giving the offset to continue from. PNG, JPEG, GIF and WebP images come back as images. "
            f"Other binary files are refused. Output is capped at {MAX_CHARS} characters."
        ),
        parameters=PARAMETERS,
        handler=handler,
        summary="Read a text file (offset/limit in lines) or an image from the workspace",
        group=GROUP,
    )


def read(call: ToolCall, settings: ToolsSettings) -> ToolResult:
    raw = call.arguments.get("path")
    try:
        path = resolve(call, raw, settings)
        offset = int_arg(call.arguments, "offset", 1, minimum=1, maximum=10**12)
        limit = int_arg(call.arguments, "limit", DEFAULT_LIMIT, minimum=1, maximum=MAX_LIMIT)
    except PathRefused as exc:
        return refused("read", exc, raw)
    except ValueError as exc:
        return ToolResult.error(f"read: {exc}")
    shown = display(call, path)
    if not path.exists():
        return ToolResult.error(f"read: {shown} not found; use ls or find to see which files exist", path=shown)
    if path.is_dir():
        return ToolResult.error(f"read: {shown} is a directory; use ls to list it", path=shown)
    if not path.is_file():
        return ToolResult.error(f"read: {shown} is not a regular file (a device, socket or pipe)", path=shown)
    try:
        with open(path, "rb") as handle:
            head = handle.read(SNIFF_BYTES)
        media_type = image_type(head)
        if media_type is not None:
            return _image(path, shown, media_type)
        if looks_binary(head):
            size = os.path.getsize(path)
            return ToolResult.error(f"read: {shown} is a binary file ({size} bytes) and cannot be shown as text", path=shown, bytes=size)
        return _text(path, shown, offset, limit)
    except OSError as exc:
        return os_error("read", shown, exc)


def _image(path: os.PathLike[str], shown: str, media_type: str) -> ToolResult:
    size = os.path.getsize(path)
    if size > MAX_IMAGE_BYTES:
        return ToolResult.error(f"read: image {shown} is too large ({size} bytes; the limit is {MAX_IMAGE_BYTES})", path=shown, bytes=size)
    with open(path, "rb") as handle:
        data = base64.b64encode(handle.read()).decode("ascii")
    note = TextBlock(f"Image {shown} ({media_type}, {size} bytes)")
    return ToolResult((note, ImageBlock(media_type=media_type, data=data)), {"path": shown, "bytes": size, "media_type": media_type})


def _text(path: os.PathLike[str], shown: str, offset: int, limit: int) -> ToolResult:
    parts: list[str] = []
    used = 0
    line_no = 0
    last_shown = offset - 1
    truncated_chars = False
    with open(path, encoding="utf-8", errors="replace", newline="") as handle:
        for line_no, line in enumerate(handle, start=1):
            if line_no < offset:
                continue
            if line_no >= offset + limit or truncated_chars:
                continue  # keep counting the lines that remain
            if used + len(line) > MAX_CHARS:
                truncated_chars = True
                if not parts:  # a single giant line: show its start
                    parts.append(line[:MAX_CHARS])
                    last_shown = line_no
                continue
            parts.append(line)
            used += len(line)
            last_shown = line_no
    total = line_no
    if total == 0:
        return ToolResult.text(f"({shown} is empty)", path=shown, lines=0, total_lines=0)
    if offset > total:
        return ToolResult.error(f"read: offset {offset} is past the end of {shown} ({total} lines)", path=shown, total_lines=total)
    text = "".join(parts)
    remaining = total - last_shown
    notes: list[str] = []
    if truncated_chars:
        notes.append(f"output capped at {MAX_CHARS} characters")
    if remaining > 0:
        notes.append(f"{remaining} more lines: call read with offset={last_shown + 1}")
    if notes:
        if not text.endswith("\n"):
            text += "\n"
        text += f"[... {'; '.join(notes)}]"
    return ToolResult.text(
        text, path=shown, offset=offset, lines=last_shown - offset + 1, total_lines=total, truncated=bool(notes)
    )
