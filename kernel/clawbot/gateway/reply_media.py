"""The model's reply made into the message a channel gets: native reply, attachments.

``MEDIA:`` paths are confined like the file tools: taken relative to the agent's
workspace, and attached only when the file really is a regular file inside it (no symbolic
link or hard link leading out, nothing but a regular file: :func:`clawbot.workspacefiles.open_file`,
checked on the file actually opened). A file is then copied, through the very descriptor that was checked,
into a private folder of the state dir (``media/outbound``), and the channel gets the copy:
a file swapped for a link to a secret between the check and the upload cannot be what is
sent. Copies older than an hour are removed as new ones are made. Links must be http(s).
An attachment that is refused, or that the channel cannot send, becomes a short line in the
reply saying so, never an error.
"""

from __future__ import annotations

import os
import secrets
import time
from pathlib import Path
from urllib.parse import urlsplit

import attrs

from clawbot.agent.notices import quoted_line
from clawbot.gateway.reply_protocol import ParsedReply
from clawbot.statefile import make_private_dir
from clawbot.types import ChannelCapabilities, InboundMessage, OutboundMessage
from clawbot.workspacefiles import FileRefused, open_file

NAME_WIDTH = 80
#: the largest file a reply attaches (Telegram's own upload limit is 50 MB)
MAX_ATTACHMENT_BYTES = 50 * 1024 * 1024
#: how long a copy made for a channel is kept (long enough for a channel's retries)
STAGED_FOR_S = 3600.0


def _named(ref: str) -> str:
    shown = quoted_line(ref)
    return shown if len(shown) <= NAME_WIDTH else shown[: NAME_WIDTH - 1] + "\u2026"


def _is_link(ref: str) -> bool:
    return "://" in ref or ref.lower().startswith(("http:", "https:", "data:", "file:", "mailto:"))


def attachment(ref: str, workspace: Path, staging: Path | None = None) -> tuple[str | None, str | None]:
    """``(what to attach, None)`` or ``(None, why not)`` for one ``MEDIA:`` reference; with
    ``staging``, a file is attached as a private copy made there (see the module)."""
    ref = ref.strip().strip("<>\"'`").strip()
    if any(ord(char) < 32 or ord(char) == 127 for char in ref):
        return None, "its name holds control characters"
    if _is_link(ref):
        parts = urlsplit(ref)
        if parts.scheme.lower() in ("http", "https") and parts.netloc:
            return ref, None
        return None, "only http(s) links can be attached"
    path = Path(ref)
    candidate = path if path.is_absolute() else workspace / path
    try:
        fd = open_file(candidate, workspace)
    except FileRefused as exc:
        return None, exc.summary
    except (FileNotFoundError, NotADirectoryError):
        return None, "there is no such file in the workspace"
    except (OSError, ValueError) as exc:
        return None, f"it could not be opened ({getattr(exc, 'strerror', None) or 'error'})"
    try:
        if staging is None:
            return os.path.realpath(candidate), None
        return _staged_copy(fd, candidate.name, staging)
    finally:
        os.close(fd)


def _staged_copy(fd: int, name: str, staging: Path) -> tuple[str | None, str | None]:
    """The open file ``fd`` copied into ``staging`` (0600 in a 0700 folder); blocking, so the
    outbox shapes a reply in a worker thread."""
    if os.fstat(fd).st_size > MAX_ATTACHMENT_BYTES:
        return None, f"it is larger than {MAX_ATTACHMENT_BYTES // (1024 * 1024)} MB"
    make_private_dir(staging)
    _drop_old_copies(staging)
    safe_name = "".join(c if c.isalnum() or c in "._-" else "_" for c in name)[-80:] or "file"
    target = staging / f"{secrets.token_hex(6)}-{safe_name}"
    out = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    copied = 0
    try:
        while copied <= MAX_ATTACHMENT_BYTES and (chunk := os.read(fd, 1 << 20)):
            copied += len(chunk)
            view = memoryview(chunk)
            while view:
                view = view[os.write(out, view) :]
    finally:
        os.close(out)
    if copied > MAX_ATTACHMENT_BYTES:  # it grew while it was copied
        os.unlink(target)
        return None, f"it is larger than {MAX_ATTACHMENT_BYTES // (1024 * 1024)} MB"
    return str(target), None


def _drop_old_copies(staging: Path) -> None:
    cutoff = time.time() - STAGED_FOR_S
    try:
        with os.scandir(staging) as entries:
            for entry in entries:
                try:
                    if entry.is_file(follow_symlinks=False) and entry.stat(follow_symlinks=False).st_mtime < cutoff:
                        os.unlink(entry.path)
                except OSError:
                    continue
    except OSError:
        return


def shape_reply(
    parsed: ParsedReply,
    inbound: InboundMessage,
    workspace: Path,
    capabilities: ChannelCapabilities,
    staging: Path | None = None,
) -> OutboundMessage:
    """The message answering ``inbound`` that ``parsed`` asks for.

    Without a reply tag the answer quotes the message it answers, as every answer does.
    A channel that cannot send files gets links as lines of the text instead, and a line
    naming each file it could not get."""
    reply = inbound.answer(parsed.text, quoting=True)
    if parsed.reply_to is not None:
        reply = attrs.evolve(reply, reply_to_id=parsed.reply_to)
    media: list[str] = []
    notes: list[str] = []
    for ref in parsed.media:
        attached, refused = attachment(ref, workspace, staging if capabilities.media else None)
        if attached is None:
            notes.append(f"({_named(ref)} was not attached: {refused})")
        elif capabilities.media:
            media.append(attached)
        elif attached.startswith(("http://", "https://")):
            notes.append(attached)
        else:
            notes.append(f"({_named(ref)} was not attached: this chat cannot receive files)")
    text = "\n".join(part for part in (parsed.text, *notes) if part)
    return attrs.evolve(reply, text=text, media=tuple(media), audio_as_voice=parsed.audio_as_voice and bool(media))
