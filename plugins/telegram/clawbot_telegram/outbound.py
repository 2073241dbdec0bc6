"""One outbound message's calls: text, photos and documents, to the right chat, topic and reply.

Only the first message of a reply quotes what it answers; approval buttons go on the last.
A pressed button sends ``/approve <id> <choice>`` back as the presser's own message, so the
gateway checks it exactly as if it had been typed (only the owner may approve).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Any

from clawbot.types import OutboundMessage

if TYPE_CHECKING:
    from telegram import Bot, InlineKeyboardMarkup

PHOTO_SUFFIXES = (".jpg", ".jpeg", ".png", ".webp")
CHOICE_LABELS = {"allow-once": "Allow once", "allow-always": "Allow always", "deny": "Deny"}
CALLBACK_DATA_LIMIT = 64  # bytes, Telegram's limit


def _int_or_none(value: str | None) -> int | None:
    return int(value) if value is not None and value.lstrip("-").isdigit() else None


def approval_keyboard(message: OutboundMessage) -> InlineKeyboardMarkup | None:
    from telegram import InlineKeyboardButton, InlineKeyboardMarkup

    offer = message.approval
    if offer is None:
        return None
    buttons = []
    for choice in offer.choices:
        data = f"/approve {offer.id} {choice}"
        if len(data.encode()) > CALLBACK_DATA_LIMIT:
            return None  # the notice says what to type instead
        buttons.append(InlineKeyboardButton(CHOICE_LABELS.get(choice, choice), callback_data=data))
    return InlineKeyboardMarkup([buttons])


class Outbox:
    def __init__(self, bot: Bot, message: OutboundMessage, call: Any) -> None:
        self.bot = bot
        self.message = message
        self.call = call
        self.chat_id: int | str = _int_or_none(message.peer_id) or message.peer_id
        self.thread_id = _int_or_none(message.thread_id)
        self.reply_to = _int_or_none(message.reply_to_id)
        self.keyboard = approval_keyboard(message)

    def _where(self) -> dict[str, Any]:
        from telegram import ReplyParameters

        where: dict[str, Any] = {"chat_id": self.chat_id, "message_thread_id": self.thread_id}
        if self.reply_to is not None:
            where["reply_parameters"] = ReplyParameters(self.reply_to, allow_sending_without_reply=True)
            self.reply_to = None  # only the first message quotes
        return where

    async def text(self, text: str, *, html: bool, keyboard: bool) -> str:
        sent = await self.call(
            self.bot.send_message,
            text=text,
            parse_mode="HTML" if html else None,
            reply_markup=self.keyboard if keyboard else None,
            **self._where(),
        )
        return str(sent.message_id)

    async def media(self, caption: Any) -> str | None:
        """Send every file (a local path or an http(s) URL); the caption goes with the first."""
        sent_id = None
        for index, item in enumerate(self.message.media):
            first = index == 0
            fields: dict[str, Any] = dict(self._where())
            if first and caption is not None:
                fields.update(caption=caption.html, parse_mode="HTML")
            remote = item.startswith(("http://", "https://"))
            photo = Path(item.split("?", 1)[0]).suffix.lower() in PHOTO_SUFFIXES
            if remote:  # Telegram fetches it itself
                sent = await self._upload(photo, item, fields)
            else:  # read once: a retried upload sends the same bytes
                content = await asyncio.to_thread(Path(item).read_bytes)  # clawbot's private copy, read off the event loop
                sent = await self._upload(photo, content, fields, filename=Path(item).name)
            sent_id = str(sent.message_id)
        return sent_id

    async def _upload(self, photo: bool, content: Any, fields: dict[str, Any], filename: str | None = None) -> Any:
        if photo:
            return await self.call(self.bot.send_photo, photo=content, filename=filename, **fields)
        return await self.call(self.bot.send_document, document=content, filename=filename, **fields)
