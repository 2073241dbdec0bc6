"""The Telegram channel: long polling in, HTML messages, photos and documents out.

Updates are fetched with ``getUpdates`` and confirmed by offset, and only once the gateway
took the update (``await sink(message)`` returned): from then on the gateway keeps it on
disk until it is answered, so a crash loses no message (the channel contract,
docs/plugins/writing-plugins.md). The offset of the last update handed over is kept under
the state dir, so neither a restart nor a lost connection answers an update twice; a
message Telegram delivers again anyway is recognised by the gateway by its message id. A network failure while polling raises
``ConnectionError`` out of :meth:`start`, and the gateway restarts the channel with backoff;
a send retries a few times on its own (a reply is not dropped because the network blinked),
and every call waits out Telegram's flood control (429 ``retry_after``).

The bot token is part of every Bot API address, so nothing here logs an address: the HTTP
client's request log is turned down, and errors are reported by their text only.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import warnings
from collections.abc import Awaitable, Callable
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from clawbot.statefile import atomic_write_json, make_private_dir, read_state
from clawbot.types import Channel, ChannelCapabilities, InboundMessage, InboundSink, OutboundMessage

from clawbot_telegram.config import TelegramConfig
from clawbot_telegram.render import CAPTION_LIMIT, Piece, notice_messages, plain_messages, to_messages

if TYPE_CHECKING:
    from telegram import Bot, Update

log = logging.getLogger(__name__)
T = TypeVar("T")

SEND_RETRY_DELAYS = (1.0, 2.0, 4.0, 8.0, 15.0)
MAX_FLOOD_WAITS = 5


def _seconds(exc: Exception) -> float:
    """How long a 429 asks to wait, whichever type this python-telegram-bot version gives."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the announced switch to timedelta: both are read
        retry_after = exc.retry_after  # type: ignore[attr-defined]
    return retry_after.total_seconds() if isinstance(retry_after, timedelta) else float(retry_after)


class TelegramChannel(Channel):
    name = "telegram"
    capabilities = ChannelCapabilities(max_text_length=4096, markdown="telegram-html", edit=True, typing=True, typing_interval_s=4.5, media=True, threads=True)

    def __init__(self, config: TelegramConfig, *, state_dir: Path) -> None:
        self.config = config
        self.state_dir = state_dir
        self._bot: Bot | None = None
        self._stopping = asyncio.Event()

    # ------------------------------------------------------------------ the bot

    def _secret_free(self, text: str) -> str:
        return text.replace(self.config.token, "<token>")

    async def _ready_bot(self) -> Bot:
        """The bot, its ``getMe`` done once (the username that mentions are matched against)."""
        from telegram import Bot
        from telegram.request import HTTPXRequest

        # httpx logs every request's address at INFO, python-telegram-bot its base address
        # at DEBUG, and the address holds the token
        for name in ("httpx", "httpcore", "telegram"):
            logging.getLogger(name).setLevel(logging.WARNING)
        if self._bot is None:
            base = self.config.api_base_url.rstrip("/")
            timeout = self.config.request_timeout_s
            request = HTTPXRequest(
                connection_pool_size=8, read_timeout=timeout, write_timeout=timeout, connect_timeout=min(timeout, 10.0), pool_timeout=timeout
            )
            polling = HTTPXRequest(connection_pool_size=1, read_timeout=10.0, connect_timeout=10.0, pool_timeout=10.0)
            self._bot = Bot(self.config.token, base_url=f"{base}/bot", base_file_url=f"{base}/file/bot", request=request, get_updates_request=polling)
        await self._call(self._bot.initialize)
        return self._bot

    async def _call(self, method: Callable[..., Awaitable[T]], *args: Any, **kwargs: Any) -> T:
        """One Bot API call: flood control waited out; a refused connection retried with backoff.

        A timeout is not retried: the message may have arrived, and twice is worse than once."""
        from telegram.error import BadRequest, NetworkError, RetryAfter, TimedOut

        floods = failures = 0
        while True:
            try:
                return await method(*args, **kwargs)
            except RetryAfter as exc:
                floods += 1
                if floods > MAX_FLOOD_WAITS:
                    raise
                wait = _seconds(exc)
                log.info("telegram: flood control, waiting %.0f s as asked", wait)
                await asyncio.sleep(wait)
            except (BadRequest, TimedOut):
                raise
            except NetworkError as exc:
                if failures >= len(SEND_RETRY_DELAYS) or self._stopping.is_set():
                    raise ConnectionError(f"Telegram is unreachable: {self._secret_free(str(exc))}") from None
                log.info("telegram: %s; trying again in %.0f s", self._secret_free(str(exc)), SEND_RETRY_DELAYS[failures])
                await asyncio.sleep(SEND_RETRY_DELAYS[failures])
                failures += 1

    # ------------------------------------------------------------------ receiving

    def _offset_file(self, bot: Bot) -> Path:
        return self.state_dir / f"offset-{bot.id}.json"

    def _load_offset(self, bot: Bot) -> int | None:
        data = read_state(self._offset_file(bot), "ignored: updates Telegram still holds may be answered again")
        offset = data.get("offset") if isinstance(data, dict) else None
        return offset if isinstance(offset, int) and offset > 0 else None

    async def start(self, sink: InboundSink) -> None:
        from telegram.error import Conflict, InvalidToken, NetworkError, RetryAfter, TimedOut

        self._stopping.clear()
        try:
            bot = await self._ready_bot()
            # polling and a webhook exclude each other; what Telegram holds stays queued
            await self._call(bot.delete_webhook, drop_pending_updates=False)
        except InvalidToken:
            raise RuntimeError("Telegram refused the bot token ([channels.telegram] token)") from None
        offset = self._load_offset(bot)
        make_private_dir(self.state_dir)
        log.info("telegram: polling as @%s", bot.username)
        while not self._stopping.is_set():
            try:
                updates = await bot.get_updates(offset=offset, timeout=self.config.poll_timeout_s, allowed_updates=["message", "callback_query"])
            except RetryAfter as exc:
                await asyncio.sleep(_seconds(exc))
                continue
            except TimedOut:
                continue  # a long poll that outlasted the read timeout: simply ask again
            except (NetworkError, Conflict) as exc:
                if self._stopping.is_set():
                    return
                raise ConnectionError(f"Telegram polling failed: {self._secret_free(str(exc))}") from None
            for update in updates:
                await self._dispatch(update, bot, sink)
                offset = update.update_id + 1
                atomic_write_json(self._offset_file(bot), {"offset": offset})

    async def _dispatch(self, update: Update, bot: Bot, sink: InboundSink) -> None:
        """Hand one update to the gateway. A network failure (a download) leaves it unconfirmed
        for the next poll; anything else wrong with it is logged and the update skipped."""
        from telegram.error import BadRequest, NetworkError, TelegramError

        from clawbot_telegram.inbound import button_press, inbound_message

        try:
            message: InboundMessage | None = None
            if update.callback_query is not None:
                query = update.callback_query
                with contextlib.suppress(TelegramError):
                    await self._call(bot.answer_callback_query, query.id)
                message = button_press(query, self.config)
            elif update.message is not None:
                admits = getattr(sink, "admits", None)
                message = await inbound_message(update.message, bot, self.config, self.state_dir / "media", admits)
            if message is not None:
                await sink(message)
        except (ConnectionError, asyncio.CancelledError):
            raise
        except NetworkError as exc:
            if isinstance(exc, BadRequest):
                log.warning("telegram: skipped update %d: %s", update.update_id, self._secret_free(str(exc)))
                return
            raise ConnectionError(f"Telegram is unreachable: {self._secret_free(str(exc))}") from None
        except Exception as exc:
            log.warning("telegram: skipped update %d: %s: %s", update.update_id, type(exc).__name__, self._secret_free(str(exc)))

    async def stop(self) -> None:
        self._stopping.set()
        if self._bot is not None:
            with contextlib.suppress(Exception):
                await self._bot.shutdown()

    # ------------------------------------------------------------------ sending

    async def send(self, message: OutboundMessage) -> str | None:
        from clawbot_telegram.outbound import Outbox

        bot = await self._ready_bot()
        pieces = notice_messages(message.text) if message.notice else to_messages(message.text)
        outbox = Outbox(bot, message, self._call)
        if message.media:
            caption = pieces[0] if len(pieces) == 1 and len(pieces[0].html) <= CAPTION_LIMIT else None
            last = await outbox.media(caption)
            if caption is not None:
                return last
            if last is not None:
                outbox.reply_to = None  # the text follows the files
        sent = None
        for index, piece in enumerate(pieces):
            sent = await self._send_piece(outbox, piece, last=index == len(pieces) - 1)
        return sent

    async def _send_piece(self, outbox: Any, piece: Piece, *, last: bool) -> str | None:
        from telegram.error import BadRequest

        try:
            return await outbox.text(piece.html, html=True, keyboard=last)
        except BadRequest as exc:
            if "entit" not in str(exc).lower() and "parse" not in str(exc).lower():
                raise
            log.info("telegram: sending as plain text, Telegram refused the HTML: %s", exc)
        sent = None
        plain = plain_messages(piece.plain)
        for index, text in enumerate(plain):
            sent = await outbox.text(text, html=False, keyboard=last and index == len(plain) - 1)
        return sent

    async def edit(self, message: OutboundMessage, message_id: str) -> None:
        from telegram.error import BadRequest

        bot = await self._ready_bot()
        pieces = to_messages(message.text) or [Piece(" ", " ")]
        try:
            await self._call(bot.edit_message_text, pieces[0].html, chat_id=int(message.peer_id), message_id=int(message_id), parse_mode="HTML")
        except BadRequest as exc:
            if "not modified" not in str(exc).lower():
                raise

    async def typing(self, message: InboundMessage) -> None:
        from telegram.error import TelegramError

        thread = int(message.thread_id) if message.thread_id and message.thread_id.isdigit() else None
        try:
            bot = await self._ready_bot()
            await bot.send_chat_action(int(message.peer_id), "typing", message_thread_id=thread)
        except (TelegramError, ConnectionError) as exc:  # only an indicator: never worth a retry or a failure
            log.debug("telegram: typing indicator not shown: %s", self._secret_free(str(exc)))
