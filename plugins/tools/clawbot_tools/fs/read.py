"""``read``: a slice of a text file, or an image as an image block."""

from __future__ import annotations

import base64
import codecs
import os
import stat
from collections.abc import Sequence
from typing import BinaryIO

from clawbot import ImageBlock, TextBlock, Tool, ToolCall, ToolResult

from clawbot_tools.calls import schema
from clawbot_tools.config import ToolsSettings
from clawbot_tools.fs.common import GROUP, SNIFF_BYTES, int_arg, looks_binary, os_error, refused
from clawbot_tools.fs.fd import open_read
from clawbot_tools.fs.lines import Lines
from clawbot_tools.fs.paths import PathRefused, display, resolve_readable

DEFAULT_LIMIT = 2000
MAX_LIMIT = 100_000
MAX_CHARS = 50_000
# a line is read at most this far: enough bytes for MAX_CHARS characters (4 bytes each at
# most) and a few more, so a line cut here always shows as over MAX_CHARS
MAX_LINE_BYTES = 4 * MAX_CHARS + 8
# bytes looked at per call, to reach ``offset`` and to count the lines after the slice
MAX_SCAN_BYTES = 256 * 1024 * 1024
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


def make_tool(settings: ToolsSettings, hidden: Sequence[str] = ()) -> Tool:
    """``hidden``: folders it refuses wherever they are (:func:`~clawbot_tools.fs.paths.hidden_folders`)."""

    def handler(call: ToolCall) -> ToolResult:
        return read(call, settings, hidden)

    return Tool(
        name="read",
        description=(
            "Read a file in the workspace. Text files come back as text; when more lines remain the result ends "
            "with a note giving the offset to continue from. PNG, JPEG, GIF and WebP images come back as images. "
            f"Other binary files are refused. Output is capped at {MAX_CHARS} characters; a longer line shows only its start."
        ),
        parameters=PARAMETERS,
        handler=handler,
        summary="Read a text file (offset/limit in lines) or an image from the workspace",
        group=GROUP,
        profiles=("coding",),
        order=100,
        concurrent=True,  # reads only: may run beside the other read-only calls of a reply
    )


def read(call: ToolCall, settings: ToolsSettings, hidden: Sequence[str] = ()) -> ToolResult:
    raw = call.arguments.get("path")
    try:
        path, root = resolve_readable(call, raw, settings, hidden=hidden)
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
        with os.fdopen(open_read(os.fspath(path), root), "rb") as handle:
            info = os.fstat(handle.fileno())
            if not stat.S_ISREG(info.st_mode):  # swapped after the checks above
                return ToolResult.error(f"read: {shown} is not a regular file (a device, socket or pipe)", path=shown)
            head = handle.read(SNIFF_BYTES)
            media_type = image_type(head)
            if media_type is not None:
                return _image(handle, shown, media_type, info.st_size)
            if looks_binary(head):
                return ToolResult.error(f"read: {shown} is a binary file ({info.st_size} bytes) and cannot be shown as text", path=shown, bytes=info.st_size)
            handle.seek(0)
            return _text(handle, shown, offset, limit)
    except PathRefused as exc:
        return refused("read", exc, raw)
    except OSError as exc:
        return os_error("read", shown, exc)


def _image(handle: BinaryIO, shown: str, media_type: str, size: int) -> ToolResult:
    if size > MAX_IMAGE_BYTES:
        return ToolResult.error(f"read: image {shown} is too large ({size} bytes; the limit is {MAX_IMAGE_BYTES})", path=shown, bytes=size)
    handle.seek(0)
    data = handle.read(MAX_IMAGE_BYTES + 1)  # the file may have grown since it was measured
    if len(data) > MAX_IMAGE_BYTES:
        return ToolResult.error(f"read: image {shown} is too large (over {MAX_IMAGE_BYTES} bytes)", path=shown, bytes=len(data))
    note = TextBlock(f"Image {shown} ({media_type}, {len(data)} bytes)")
    encoded = base64.b64encode(data).decode("ascii")
    return ToolResult((note, ImageBlock(media_type=media_type, data=encoded)), {"path": shown, "bytes": len(data), "media_type": media_type})


def _decode(data: bytes, whole: bool) -> str:
    # a cut line may end inside a character: hold those bytes back instead of showing U+FFFD
    return codecs.getincrementaldecoder("utf-8")("replace").decode(data, final=whole)


def _text(handle: BinaryIO, shown: str, offset: int, limit: int) -> ToolResult:
    lines = Lines(handle, MAX_SCAN_BYTES)
    skipped = lines.skip(offset - 1)
    if skipped < offset - 1:
        if lines.exhausted:
            return ToolResult.error(
                f"read: line {offset} of {shown} lies beyond the first {MAX_SCAN_BYTES // 2**20} MiB (at least {skipped} lines), "
                "which is as far as read looks; read an earlier offset",
                path=shown,
            )
        if skipped == 0:
            return ToolResult.text(f"({shown} is empty)", path=shown, lines=0, total_lines=0)
        return ToolResult.error(f"read: offset {offset} is past the end of {shown} ({skipped} lines)", path=shown, total_lines=skipped)
    parts: list[str] = []
    used = 0
    last_shown = offset - 1
    capped = at_end = False
    unshown = 0  # a line read but left out for the character cap
    while last_shown - offset + 1 < limit:
        got = lines.next_line(MAX_LINE_BYTES)
        if got is None:
            at_end = True
            break
        text = _decode(*got)
        if used + len(text) > MAX_CHARS:
            capped = True
            if parts:
                unshown = 1
            else:  # a single giant line: show its start
                parts.append(text[:MAX_CHARS])
                last_shown += 1
            break
        parts.append(text)
        used += len(text)
        last_shown += 1
    rest, exact = (0, not lines.exhausted) if at_end else lines.count_rest()
    remaining = rest + unshown
    total = last_shown + remaining
    if total == 0:
        return ToolResult.text(f"({shown} is empty)", path=shown, lines=0, total_lines=0)
    text = "".join(parts)
    notes: list[str] = []
    if capped:
        notes.append(f"output capped at {MAX_CHARS} characters")
    scanned = f"{MAX_SCAN_BYTES // 2**20} MiB"
    if exact and remaining > 0:
        notes.append(f"{remaining} more lines: call read with offset={last_shown + 1}")
    elif remaining > 0:
        notes.append(f"at least {remaining} more lines (counting stopped after {scanned}): call read with offset={last_shown + 1}")
    elif not exact:
        notes.append(f"the file goes on past the first {scanned}, which is as far as read looks")
    if notes:
        if not text.endswith("\n"):
            text += "\n"
        text += f"[... {'; '.join(notes)}]"
    return ToolResult.text(
        text,
        path=shown,
        offset=offset,
        lines=last_shown - offset + 1,
        total_lines=total,
        total_exact=exact,
        truncated=bool(notes),
    )
