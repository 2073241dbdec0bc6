"""The web chat channel: every browser page connected to its socket is one of its chats.

The control API serves the page and the socket; a socket reaches :meth:`WebchatChannel.serve`
only once the client proved it holds the gateway's token, so everyone here is the owner
(``from_owner``): whoever holds the token can run clawbot anyway. A page names its chat in
its first frame (``{"type": "hello", "chat": "<id>"}``, an id the browser keeps), and that
id is the conversation's peer. Several tabs may share a chat: all of them see its replies.

Frames, JSON objects both ways. From the page: ``hello``, ``send`` (``text``: the owner's
message, approvals answered as ``/approve <id> <choice>``). To the page (after the API's own ``ready``): ``welcome``,
``delta`` (more of the reply as it is written), ``tool`` (a tool call starts), ``message``
(a reply or, with ``notice``, clawbot's own words, an ``approval`` offer among them),
``busy`` (whether a turn runs in the chat's session) and ``error``. The text in them is the
gateway's, already made visible; the page inserts it as text, never as markup.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import re
from collections import deque
from typing import Any

from clawbot import (
    Activity,
    ActivitySink,
    Channel,
    ChannelCapabilities,
    InboundMessage,
    InboundSink,
    OutboundMessage,
    TextDelta,
    ToolCallStarted,
    WebSocketPeer,
)

from clawbot_webchat.config import WebchatConfig

log = logging.getLogger(__name__)

CHAT_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
MAX_TEXT = 32_000
"""Longest message a page may send (characters): more is refused with an error frame."""
BACKLOG = 50
"""Replies kept for a chat while no page shows it (a reload, a dropped connection)."""
START_WAIT_S = 10.0
"""How long a message waits for the channel to start (a page opened while clawbot starts)."""
SEND_TIMEOUT_S = 10.0
"""A page that does not take a frame this long is dropped, so it never holds up a turn."""


class WebchatChannel(Channel):
    name = "webchat"
    capabilities = ChannelCapabilities(markdown="markdown")

    def __init__(self, config: WebchatConfig) -> None:
        self.config = config
        self._sink: InboundSink | None = None
        self._started = asyncio.Event()
        self._stopped = asyncio.Event()
        self._peers: dict[str, set[WebSocketPeer]] = {}
        self._backlog: dict[str, deque[dict[str, Any]]] = {}
        self._ids = itertools.count(1)
        self._tasks: set[asyncio.Task[None]] = set()

    # -- the gateway's side ----------------------------------------------------------------

    async def start(self, sink: InboundSink) -> None:
        self._sink = sink
        self._stopped.clear()
        self._started.set()
        try:
            await self._stopped.wait()
        finally:
            self._started.clear()

    async def stop(self) -> None:
        self._stopped.set()
        for peers in list(self._peers.values()):
            for peer in list(peers):
                try:
                    await peer.close(1001, "clawbot is stopping")
                except Exception:
                    log.debug("closing a web chat socket failed", exc_info=True)

    def live(self, message: InboundMessage) -> ActivitySink | None:
        chat = message.peer_id

        async def show(event: Activity) -> None:
            if isinstance(event, TextDelta):
                await self._broadcast(chat, {"type": "delta", "text": event.text})
            elif isinstance(event, ToolCallStarted):
                await self._broadcast(chat, {"type": "tool", "name": event.name, "summary": event.summary})

        return show

    async def send(self, message: OutboundMessage) -> str | None:
        message_id = f"w{next(self._ids)}"
        offer = message.approval
        frame = {
            "type": "message",
            "id": message_id,
            "text": message.text,
            "notice": message.notice,
            "streamed": message.streamed,
            "approval": None if offer is None else {"id": offer.id, "choices": list(offer.choices), "summary": offer.summary},
        }
        await self._broadcast(message.peer_id, frame, keep=True)
        return message_id

    # -- the socket's side -----------------------------------------------------------------

    async def serve(self, peer: WebSocketPeer) -> None:
        """One authenticated page, until it disconnects."""
        chat: str | None = None
        try:
            async for frame in peer:
                kind = frame.get("type")
                if kind == "hello":
                    chat = await self._hello(peer, frame, chat)
                elif kind == "send":
                    if chat is None:
                        await _error(peer, 'say "hello" with your chat id first')
                    else:
                        await self._submit(peer, chat, frame.get("text"))
                else:
                    await _error(peer, f"unknown frame type {str(kind)[:40]!r} (expected hello or send)")
        finally:
            if chat is not None:
                self._leave(chat, peer)

    async def _hello(self, peer: WebSocketPeer, frame: dict[str, Any], current: str | None) -> str | None:
        chat = frame.get("chat")
        if not isinstance(chat, str) or not CHAT_ID.fullmatch(chat):
            await _error(peer, "chat: 1 to 64 letters, digits, _ or -")
            return current
        if current is not None:
            self._leave(current, peer)
        self._peers.setdefault(chat, set()).add(peer)
        await peer.send({"type": "welcome", "chat": chat, "busy": self._busy(chat)})
        kept = self._backlog.get(chat)
        while kept:  # each held frame leaves the backlog only once this page took it
            await peer.send(kept[0])
            kept.popleft()
        self._backlog.pop(chat, None)
        return chat

    def _leave(self, chat: str, peer: WebSocketPeer) -> None:
        peers = self._peers.get(chat)
        if peers is not None:
            peers.discard(peer)
            if not peers:
                del self._peers[chat]

    async def _submit(self, peer: WebSocketPeer, chat: str, text: Any) -> None:
        if not isinstance(text, str) or not text.strip():
            await _error(peer, "text: a message to send (not empty)")
            return
        if len(text) > MAX_TEXT:
            await _error(peer, f"text: at most {MAX_TEXT} characters (this one has {len(text)})")
            return
        try:
            await asyncio.wait_for(self._started.wait(), START_WAIT_S)
        except TimeoutError:
            await _error(peer, "the web chat channel is not running; is it enabled in [channels.webchat]?")
            return
        assert self._sink is not None
        message = self._message(chat, text, str(next(self._ids)))
        answered = await self._sink(message)
        await self._broadcast(chat, {"type": "busy", "busy": True})
        if answered is not None:
            self._spawn(self._when_answered(chat, answered))

    def _message(self, chat: str, text: str, message_id: str | None = None) -> InboundMessage:
        return InboundMessage(
            channel=self.name,
            peer_id=chat,
            text=text,
            chat_type="direct",
            sender_id=chat,
            sender_name=self.config.user_name,
            message_id=message_id,
            from_owner=True,
        )

    async def _when_answered(self, chat: str, answered: asyncio.Future[None]) -> None:
        await asyncio.wait([answered])
        await self._broadcast(chat, {"type": "busy", "busy": self._busy(chat)})

    def _busy(self, chat: str) -> bool:
        busy = getattr(self._sink, "busy", None)
        return bool(busy(self._message(chat, ""))) if busy is not None else False

    async def _broadcast(self, chat: str, frame: dict[str, Any], *, keep: bool = False) -> None:
        """``frame`` to every page showing ``chat``; with ``keep``, held for the next one when none does."""
        taken = False
        for peer in list(self._peers.get(chat, ())):
            try:
                await asyncio.wait_for(peer.send(frame), SEND_TIMEOUT_S)
                taken = True
            except Exception:
                log.warning("a web chat page (%s) stopped taking frames; dropped", getattr(peer, "remote", "?"))
                self._leave(chat, peer)
        if keep and not taken:  # no page took it (none open, or the only one just went away)
            self._backlog.setdefault(chat, deque(maxlen=BACKLOG)).append(frame)

    def _spawn(self, coro) -> None:  # noqa: ANN001 - a coroutine
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)


async def _error(peer: WebSocketPeer, text: str) -> None:
    await peer.send({"type": "error", "text": text})
