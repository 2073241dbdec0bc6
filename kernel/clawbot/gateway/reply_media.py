"""The model's reply made into the message a channel gets: native reply, attachments.

``MEDIA:`` paths are confined like the file tools: taken relative to the agent's
workspace, and attached only when the file really is a regular file inside it (no symbolic
link or hard link leading out: :func:`clawbot.agent.confined.open_confined`, checked on the
file actually opened). Links must be http(s). An attachment that is refused, or that the
channel cannot send, becomes a short line in the reply saying so, never an error.
"""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import urlsplit

import attrs

from clawbot.agent.confined import FileRefused, NotRegularFile, open_confined
from clawbot.agent.notices import quoted_line
from clawbot.gateway.reply_protocol import ParsedReply
from clawbot.types import ChannelCapabilities, InboundMessage, OutboundMessage

NAME_WIDTH = 80


def _named(ref: str) -> str:
    shown = quoted_line(ref)
    return shown if len(shown) <= NAME_WIDTH else shown[: NAME_WIDTH - 1] + "\u2026"


def _is_link(ref: str) -> bool:
    return "://" in ref or ref.lower().startswith(("http:", "https:", "data:", "file:", "mailto:"))


def attachment(ref: str, workspace: Path) -> tuple[str | None, str | None]:
    """``(what to attach, None)`` or ``(None, why not)`` for one ``MEDIA:`` reference."""
    ref = ref.strip().strip("<>\"'`").strip()
    if _is_link(ref):
        parts = urlsplit(ref)
        if parts.scheme.lower() in ("http", "https") and parts.netloc:
            return ref, None
        return None, "only http(s) links can be attached"
    path = Path(ref)
    candidate = path if path.is_absolute() else workspace / path
    try:
        fd = open_confined(candidate, workspace)
    except FileRefused as exc:
        return None, exc.summary
    except NotRegularFile:
        return None, "it is not a file"
    except (FileNotFoundError, NotADirectoryError):
        return None, "there is no such file in the workspace"
    except OSError as exc:
        return None, f"it could not be opened ({exc.strerror or 'error'})"
    os.close(fd)
    return os.path.realpath(candidate), None


def shape_reply(
    parsed: ParsedReply,
    inbound: InboundMessage,
    workspace: Path,
    capabilities: ChannelCapabilities,
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
        attached, refused = attachment(ref, workspace)
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
