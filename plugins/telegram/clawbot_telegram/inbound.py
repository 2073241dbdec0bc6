"""Telegram updates as clawbot's inbound messages.

A direct chat's peer is the user, a group's the group (a forum topic is its thread). The
owner is recognised by numeric user id only (``owner_ids``): a username or a display name is
chosen by the sender. A message mentions the bot when it names the bot's ``@username`` or
answers one of the bot's messages.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import attrs
from clawbot.statefile import private_binary_writer
from clawbot.types import Attachment, InboundMessage

if TYPE_CHECKING:
    from telegram import Bot, CallbackQuery, Message, User

    from clawbot_telegram.config import TelegramConfig

log = logging.getLogger(__name__)

CHAT_TYPES = {"private": "direct", "group": "group", "supergroup": "group", "channel": "channel"}


def sender_name(user: User | None) -> str | None:
    if user is None:
        return None
    return user.full_name or user.username or str(user.id)


def _mentions(message: Message) -> tuple[str, ...]:
    """The usernames (without ``@``) and user ids the text mentions, in order."""
    found: list[str] = []
    for entity, text in message.parse_entities(["mention", "text_mention"]).items():
        if entity.type == "mention":
            found.append(text.lstrip("@"))
        elif entity.user is not None:
            found.append(str(entity.user.id))
    for entity, text in message.parse_caption_entities(["mention", "text_mention"]).items():
        found.append(text.lstrip("@") if entity.type == "mention" else str(entity.user.id if entity.user else text))
    return tuple(found)


def _addressed(message: Message, bot: Bot, mentions: tuple[str, ...]) -> bool:
    username = (bot.username or "").lower()
    if username and username in (m.lower() for m in mentions):
        return True
    if str(bot.id) in mentions:
        return True
    replied = message.reply_to_message
    return replied is not None and replied.from_user is not None and replied.from_user.id == bot.id


def _chat_fields(message: Message, config: TelegramConfig, user: User | None) -> dict:
    chat_type = CHAT_TYPES.get(message.chat.type, "group")
    thread = message.message_thread_id if message.is_topic_message else None
    return {
        "peer_id": str(message.chat.id),
        "chat_type": chat_type,
        "sender_id": str(user.id) if user is not None else None,
        "sender_name": sender_name(user),
        "thread_id": str(thread) if thread is not None else None,
        "from_owner": user is not None and str(user.id) in config.owner_ids,
    }


async def inbound_message(
    message: Message, bot: Bot, config: TelegramConfig, media_dir: Path, admits: Callable[[InboundMessage], bool] | None = None
) -> InboundMessage | None:
    """``message`` for the gateway, its photo or document downloaded when ``admits`` lets
    it in (a stranger's or an unmentioned group member's file is never fetched); ``None``
    for nothing to answer."""
    user = message.from_user
    if user is not None and user.id == bot.id:
        return None
    text = message.text or message.caption or ""
    bare = _message(message, bot, config, user, text, ())
    if admits is not None and not admits(bare):
        return bare  # turned away by the gateway (a stranger gets a pairing code), unread
    attachments = await _download(message, bot, config, media_dir)
    if not text and not attachments:
        return None  # a sticker, a service message (someone joined): nothing to answer
    return attrs.evolve(bare, attachments=attachments)


def _message(message: Message, bot: Bot, config: TelegramConfig, user: User | None, text: str, attachments: tuple[Attachment, ...]) -> InboundMessage:
    mentions = _mentions(message)
    replied = message.reply_to_message
    return InboundMessage(
        channel="telegram",
        text=text,
        message_id=str(message.message_id),
        reply_to_id=str(replied.message_id) if replied is not None else None,
        timestamp=message.date,
        mentions=mentions,
        mentioned=_addressed(message, bot, mentions),
        attachments=attachments,
        **_chat_fields(message, config, user),
    )


def button_press(query: CallbackQuery, config: TelegramConfig) -> InboundMessage | None:
    """A pressed approval button, as the message its presser would have typed."""
    message = query.message
    data = query.data or ""
    if message is None or not data.startswith(("/approve ", "/deny ")):
        return None
    fields = _chat_fields(message, config, query.from_user)  # type: ignore[arg-type]
    return InboundMessage(channel="telegram", text=data, mentioned=True, **fields)


async def _download(message: Message, bot: Bot, config: TelegramConfig, media_dir: Path) -> tuple[Attachment, ...]:
    """The message's photo (largest size) or document, saved under the state dir."""
    if message.photo:
        photo = message.photo[-1]
        item, kind, name, mime = photo, "image", None, "image/jpeg"
    elif message.document is not None:
        document = message.document
        item, kind, name, mime = document, _kind_of(document.mime_type), document.file_name, document.mime_type
    else:
        return ()
    limit = config.max_download_mb * 1024 * 1024
    if item.file_size is not None and item.file_size > limit:
        log.warning("telegram: skipped a %d-byte file over max_download_mb", item.file_size)
        return ()
    telegram_file = await item.get_file()
    suffix = Path(telegram_file.file_path or name or "").suffix[:16] or (".jpg" if kind == "image" else "")
    target = media_dir / f"{message.chat.id}-{message.message_id}-{item.file_unique_id}{suffix}"
    with private_binary_writer(target) as out:  # someone's photo: 0600 from the start, in a 0700 folder
        await telegram_file.download_to_memory(out)
    return (Attachment(kind=kind, path=str(target), mime_type=mime, name=name, size=target.stat().st_size),)


def _kind_of(mime: str | None) -> str:
    major = (mime or "").partition("/")[0]
    return {"image": "image", "audio": "audio", "video": "video"}.get(major, "document")
