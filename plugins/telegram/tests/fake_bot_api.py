"""A fake Telegram Bot API on 127.0.0.1, for driving the real channel through python-telegram-bot.

It answers the methods the channel calls, with Telegram's envelope (``{"ok": true,
"result": ...}``) and Telegram's semantics where they matter: ``getUpdates`` long-polls
(returns as soon as an update is there, else after ``timeout``) and an ``offset`` confirms,
and so forgets, every update before it. Tests push updates (:meth:`FakeBotApi.message`,
:meth:`FakeBotApi.press`), read what the bot did (:attr:`FakeBotApi.calls`,
:meth:`FakeBotApi.sent`), and inject faults: the next calls answered 429 with
``retry_after`` (:meth:`FakeBotApi.flood`), or the whole API down (connections dropped, or
502) until :meth:`FakeBotApi.up`.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from typing import Any

import attrs
from aiohttp import web

BOT_ID = 7000001
TOKEN = f"{BOT_ID}:AAFakeTokenForTestsOnly-0123456789ab"
BOT_USERNAME = "claw_test_bot"
JSON_FIELDS = {"reply_markup", "reply_parameters", "allowed_updates", "link_preview_options", "entities", "caption_entities"}
ANSWERING = {"sendMessage", "sendPhoto", "sendDocument", "editMessageText"}


@attrs.frozen
class User:
    id: int
    first_name: str
    username: str | None = None

    def json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"id": self.id, "is_bot": False, "first_name": self.first_name}
        if self.username:
            data["username"] = self.username
        return data


@attrs.define
class Call:
    method: str
    params: dict[str, Any]
    at: float
    files: dict[str, bytes] = attrs.field(factory=dict)
    answered: int = 200


class FakeBotApi:
    def __init__(self, token: str = TOKEN) -> None:
        self.token = token
        self.calls: list[Call] = []
        self.bad_tokens: list[str] = []
        self.refuse_html = 0
        """How many of the next HTML messages to refuse as Telegram refuses bad entities."""
        self._updates: list[dict[str, Any]] = []
        self._update_ids = itertools.count(500)
        self._message_ids = itertools.count(1)
        self._changed = asyncio.Condition()
        self._floods: list[tuple[int, str | None]] = []  # (retry_after, method or None) per call to answer 429
        self._down: str | None = None
        self._files: dict[str, tuple[str, bytes]] = {}
        self._runner: web.AppRunner | None = None
        self.base_url = ""

    # ------------------------------------------------------------------ serving

    async def start(self) -> str:
        app = web.Application(client_max_size=60 * 1024 * 1024)
        app.router.add_post("/bot{token}/{method}", self._method)
        app.router.add_get("/bot{token}/{method}", self._method)
        app.router.add_get("/file/bot{token}/{path:.+}", self._download)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self.base_url = f"http://127.0.0.1:{port}"
        return self.base_url

    async def close(self) -> None:
        await self.down()  # ends the long polls still waiting, so closing does not wait for them
        if self._runner is not None:
            await self._runner.cleanup()

    async def _method(self, request: web.Request) -> web.StreamResponse:
        if request.match_info["token"] != self.token:
            self.bad_tokens.append(request.match_info["token"])
            return web.json_response({"ok": False, "error_code": 401, "description": "Unauthorized"}, status=401)
        method = request.match_info["method"]
        params, files = await self._params(request)
        call = Call(method, params, time.monotonic(), files)
        self.calls.append(call)
        if self._down is not None:
            return self._refuse(request, call)
        flood = next((i for i, (_, only) in enumerate(self._floods) if only in (None, method)), None)
        if flood is not None:
            retry_after, _ = self._floods.pop(flood)
            call.answered = 429
            body = {"ok": False, "error_code": 429, "description": f"Too Many Requests: retry after {retry_after}", "parameters": {"retry_after": retry_after}}
            return web.json_response(body, status=429)
        if self.refuse_html and params.get("parse_mode") == "HTML":
            self.refuse_html -= 1
            call.answered = 400
            body = {"ok": False, "error_code": 400, "description": "Bad Request: can't parse entities: unsupported start tag at byte offset 0"}
            return web.json_response(body, status=400)
        handler = getattr(self, f"_m_{method}", None)
        if handler is None:
            return web.json_response({"ok": False, "error_code": 404, "description": "Not Found: method not found"}, status=404)
        result = await handler(params, files, request)
        if self._down is not None:  # went down during a long poll: the answer never arrives
            return self._refuse(request, call)
        return web.json_response({"ok": True, "result": result})

    def _refuse(self, request: web.Request, call: Call) -> web.StreamResponse:
        call.answered = 502 if self._down == "502" else 0
        if self._down == "502":
            return web.Response(status=502, text="<html><body>502 Bad Gateway</body></html>", content_type="text/html")
        if request.transport is not None:
            request.transport.close()  # the connection drops without an answer
        return web.Response(status=500)

    async def _params(self, request: web.Request) -> tuple[dict[str, Any], dict[str, bytes]]:
        params: dict[str, Any] = {}
        files: dict[str, bytes] = {}
        if request.content_type == "application/json":
            return dict(await request.json()), files
        form = await request.post()
        for key, value in form.items():
            if isinstance(value, web.FileField):
                files[key] = value.file.read()
                continue
            params[key] = json.loads(value) if key in JSON_FIELDS and isinstance(value, str) else value
        return params, files

    async def _download(self, request: web.Request) -> web.StreamResponse:
        if request.match_info["token"] != self.token or self._down is not None:
            return web.Response(status=404)
        for path, content in self._files.values():
            if path == request.match_info["path"]:
                return web.Response(body=content)
        return web.Response(status=404)

    # ------------------------------------------------------------------ methods

    def me(self) -> dict[str, Any]:
        return {"id": BOT_ID, "is_bot": True, "first_name": "Claw", "username": BOT_USERNAME, "can_join_groups": True}

    async def _m_getMe(self, params: dict, files: dict, request: web.Request) -> Any:
        return self.me()

    async def _m_deleteWebhook(self, params: dict, files: dict, request: web.Request) -> Any:
        return True

    async def _m_answerCallbackQuery(self, params: dict, files: dict, request: web.Request) -> Any:
        return True

    async def _m_sendChatAction(self, params: dict, files: dict, request: web.Request) -> Any:
        return True

    async def _m_getUpdates(self, params: dict, files: dict, request: web.Request) -> Any:
        offset = int(params.get("offset") or 0)
        timeout = float(params.get("timeout") or 0)
        async with self._changed:
            if offset:
                self._updates = [u for u in self._updates if u["update_id"] >= offset]
            try:
                await asyncio.wait_for(self._changed.wait_for(lambda: bool(self._updates) or self._down is not None), timeout)
            except TimeoutError:
                pass
            return list(self._updates[:100])

    def _message(self, chat_id: Any, **fields: Any) -> dict[str, Any]:
        chat_id = int(chat_id)
        chat = {"id": chat_id, "type": "private" if chat_id > 0 else "supergroup"}
        if chat_id < 0:
            chat["title"] = "A group"
        message = {"message_id": next(self._message_ids), "date": int(time.time()), "chat": chat, "from": {**self.me(), "is_bot": True}}
        return {**message, **fields}

    async def _m_sendMessage(self, params: dict, files: dict, request: web.Request) -> Any:
        return self._message(params["chat_id"], text=params["text"])

    async def _m_editMessageText(self, params: dict, files: dict, request: web.Request) -> Any:
        return self._message(params["chat_id"], text=params["text"])

    async def _m_sendPhoto(self, params: dict, files: dict, request: web.Request) -> Any:
        return self._message(params["chat_id"], photo=[{"file_id": "sent-photo", "file_unique_id": "sp", "width": 1, "height": 1}])

    async def _m_sendDocument(self, params: dict, files: dict, request: web.Request) -> Any:
        return self._message(params["chat_id"], document={"file_id": "sent-doc", "file_unique_id": "sd"})

    async def _m_getFile(self, params: dict, files: dict, request: web.Request) -> Any:
        file_id = params["file_id"]
        path, content = self._files[file_id]
        return {"file_id": file_id, "file_unique_id": f"u{file_id}", "file_size": len(content), "file_path": path}

    # ------------------------------------------------------------------ what tests do

    async def _push(self, update: dict[str, Any]) -> dict[str, Any]:
        async with self._changed:
            self._updates.append(update)
            self._changed.notify_all()
        return update

    async def message(
        self,
        user: User,
        text: str | None = None,
        *,
        chat_id: int | None = None,
        reply_to_bot: int | None = None,
        thread_id: int | None = None,
        photo: bytes | None = None,
        document: tuple[str, bytes] | None = None,
    ) -> dict[str, Any]:
        """``user`` writes ``text`` in a direct chat, or in the group ``chat_id`` (negative);
        ``@name`` words become mention entities, as Telegram's clients send them."""
        chat_id = user.id if chat_id is None else chat_id
        chat: dict[str, Any] = {"id": chat_id, "type": "private", "first_name": user.first_name}
        if chat_id < 0:
            chat = {"id": chat_id, "type": "supergroup", "title": "A group", "is_forum": thread_id is not None}
        message: dict[str, Any] = {"message_id": next(self._message_ids), "date": int(time.time()), "chat": chat, "from": user.json()}
        key = "text" if photo is None and document is None else "caption"
        if text is not None:
            message[key] = text
            entities = [{"type": "mention", "offset": text.index(w), "length": len(w)} for w in text.split() if w.startswith("@")]
            if entities:
                message[f"{key}_entities" if key == "caption" else "entities"] = entities
        if reply_to_bot is not None:
            message["reply_to_message"] = self._message(chat_id, message_id=reply_to_bot, text="earlier")
        if thread_id is not None:
            message.update(message_thread_id=thread_id, is_topic_message=True)
        if photo is not None:
            file_id = f"photo{len(self._files)}"
            self._files[file_id] = (f"photos/{file_id}.jpg", photo)
            message["photo"] = [{"file_id": file_id, "file_unique_id": f"u{file_id}", "width": 90, "height": 90, "file_size": len(photo)}]
        if document is not None:
            file_id = f"doc{len(self._files)}"
            self._files[file_id] = (f"documents/{document[0]}", document[1])
            message["document"] = {"file_id": file_id, "file_unique_id": f"u{file_id}", "file_name": document[0], "file_size": len(document[1])}
        return await self._push({"update_id": next(self._update_ids), "message": message})

    async def press(self, user: User, sent: Call, data: str) -> dict[str, Any]:
        """``user`` presses the button carrying ``data`` under the bot's message ``sent``."""
        buttons = [b for row in sent.params["reply_markup"]["inline_keyboard"] for b in row]
        assert data in [b["callback_data"] for b in buttons], (data, buttons)
        message = self._message(sent.params["chat_id"], text=sent.params["text"])
        query = {"id": str(next(self._update_ids)), "from": user.json(), "message": message, "chat_instance": "ci", "data": data}
        return await self._push({"update_id": next(self._update_ids), "callback_query": query})

    def flood(self, times: int = 1, retry_after: int = 1, method: str | None = None) -> None:
        """The next ``times`` calls (of ``method``, or any) are answered 429 with ``retry_after``."""
        self._floods.extend([(retry_after, method)] * times)

    async def down(self, how: str = "drop") -> None:
        """Every call fails from now on: its connection dropped (``drop``) or a 502 answer."""
        async with self._changed:
            self._down = how
            self._changed.notify_all()

    def up(self) -> None:
        self._down = None

    def sent(self, method: str | None = None, chat_id: int | None = None) -> list[Call]:
        """The answered calls that sent or edited something (of ``method``, to ``chat_id``)."""
        return [
            c
            for c in self.calls
            if c.method in ANSWERING
            and c.answered == 200
            and (method is None or c.method == method)
            and (chat_id is None or int(c.params["chat_id"]) == chat_id)
        ]

    def texts(self, chat_id: int | None = None) -> list[str]:
        return [c.params.get("text") or c.params.get("caption") or "" for c in self.sent(chat_id=chat_id)]

    async def wait_for(self, condition: Any, timeout: float = 20.0, what: str = "") -> None:
        deadline = time.monotonic() + timeout
        while not condition():
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {what or condition}; calls: {[c.method for c in self.calls][-20:]}")
            await asyncio.sleep(0.05)
