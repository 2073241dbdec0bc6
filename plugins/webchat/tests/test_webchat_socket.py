"""The web chat's socket handler with a real kernel and gateway: what a page sends becomes
the owner's message in its chat, and what the gateway sends reaches the pages showing that
chat (and only those). Only the transport is faked (:mod:`socketpeer`); the answering is a
plain responder, as in the gateway's own tests."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import clawbot_webchat.plugin as webchat_plugin
import pytest
from clawbot import ApprovalOffer, InboundMessage, OutboundMessage, TextDelta, ToolCallStarted, WebPage, WebSocketRoute
from clawbot.testing import build_kernel

from .socketpeer import PagePeer

STATIC = Path(webchat_plugin.__file__).parent / "static"


class Chat:
    """A running gateway with the web chat channel; ``received`` is what reached the agent."""

    def __init__(self, kernel, reply=lambda message: f"echo: {message.text}") -> None:
        self.kernel = kernel
        self.received: list[InboundMessage] = []
        self.reply = reply
        self.gateway = kernel.gateway(self._respond, agent_id="main")
        (self.channel,) = [c for c in kernel.channels if c.name == "webchat"]

    async def _respond(self, message: InboundMessage, session_key: str) -> str | None:
        self.received.append(message)
        return self.reply(message)

    async def __aenter__(self) -> Chat:
        self._task = asyncio.create_task(self.gateway.run([self.channel]))
        for _ in range(500):  # until the gateway runs the channel
            if self.gateway.channel_names():
                break
            await asyncio.sleep(0.01)
        return self

    async def __aexit__(self, *exc) -> None:
        self.gateway.stop()
        await asyncio.wait_for(self._task, 30)

    def page(self, chat: str | None = "web-1") -> tuple[PagePeer, asyncio.Task[None]]:
        peer = PagePeer()
        if chat is not None:
            peer.page_sends({"type": "hello", "chat": chat})
        return peer, asyncio.create_task(self.channel.serve(peer))


async def _kernel(tmp_path: Path, config: str = ""):
    return await build_kernel(tmp_path / "home", plugins={"webchat": webchat_plugin}, config=config)


async def test_a_message_from_the_page_is_the_owners_and_its_reply_comes_back(tmp_path: Path) -> None:
    async with Chat(await _kernel(tmp_path)) as chat:
        peer, served = chat.page("web-abc_1")
        await peer.wait_for(lambda f: f["type"] == "welcome")
        assert peer.sent[0] == {"type": "welcome", "chat": "web-abc_1", "busy": False}
        peer.page_sends({"type": "send", "text": "hello there", "sender_name": "admin", "from_owner": False})
        reply = await peer.wait_for(lambda f: f["type"] == "message")
        assert reply["text"] == "echo: hello there" and reply["notice"] is False and reply["approval"] is None
        await peer.wait_for(lambda f: f == {"type": "busy", "busy": False})
        (message,) = chat.received
        assert (message.channel, message.peer_id, message.chat_type, message.from_owner) == ("webchat", "web-abc_1", "direct", True)
        assert message.sender_name == "you"  # the page's own claim is ignored
        peer.disconnect()
        await asyncio.wait_for(served, 30)


BAD_FRAMES = [
    ({"type": "hello", "chat": ""}, "chat:"),
    ({"type": "hello", "chat": "x" * 65}, "chat:"),
    ({"type": "hello", "chat": "../etc"}, "chat:"),
    ({"type": "hello", "chat": "a b"}, "chat:"),
    ({"type": "hello", "chat": "caf\u00e9"}, "chat:"),
    ({"type": "hello", "chat": 7}, "chat:"),
    ({"type": "hello"}, "chat:"),
    ({"type": "send", "text": "before hello"}, 'say "hello"'),
    ({"type": "shout", "text": "hi"}, "unknown frame type 'shout'"),
    ({"text": "no type"}, "unknown frame type"),
]


@pytest.mark.parametrize(("frame", "error"), BAD_FRAMES)
async def test_a_bad_frame_gets_an_error_naming_what_is_wrong_and_reaches_no_one(tmp_path: Path, frame: dict, error: str) -> None:
    async with Chat(await _kernel(tmp_path)) as chat:
        peer, served = chat.page(None)
        peer.page_sends(frame)
        peer.page_sends({"type": "send", "text": "after"})  # still no chat: refused too
        await peer.wait_for(lambda f: f["type"] == "error" and 'say "hello"' in f["text"] and f is not peer.sent[0])
        assert peer.sent[0]["type"] == "error" and error in peer.sent[0]["text"], peer.sent
        assert chat.received == [] and not peer.of_type("welcome")
        peer.disconnect()
        await asyncio.wait_for(served, 30)


BAD_TEXTS = [None, 5, "", "   \n", ["hi"], "x" * 32_001]


@pytest.mark.parametrize("text", BAD_TEXTS, ids=["none", "number", "empty", "blank", "list", "too-long"])
async def test_a_message_without_usable_text_is_refused_naming_text(tmp_path: Path, text) -> None:
    async with Chat(await _kernel(tmp_path)) as chat:
        peer, served = chat.page()
        peer.page_sends({"type": "send", "text": text})
        error = await peer.wait_for(lambda f: f["type"] == "error")
        assert error["text"].startswith("text:")
        assert chat.received == []
        peer.disconnect()
        await asyncio.wait_for(served, 30)


async def test_every_page_of_a_chat_sees_its_replies_and_no_other_chat_does(tmp_path: Path) -> None:
    async with Chat(await _kernel(tmp_path)) as chat:
        first, _ = chat.page("web-a")
        second, _ = chat.page("web-a")
        other, _ = chat.page("web-b")
        for peer in (first, second, other):
            await peer.wait_for(lambda f: f["type"] == "welcome")
        first.page_sends({"type": "send", "text": "one"})
        for peer in (first, second):
            await peer.wait_for(lambda f: f.get("text") == "echo: one")
        await asyncio.sleep(0.05)
        assert not other.of_type("message") and not other.of_type("busy")
        for peer in (first, second, other):
            peer.disconnect()


async def test_replies_for_a_chat_no_page_shows_wait_for_the_next_page(tmp_path: Path) -> None:
    async with Chat(await _kernel(tmp_path)) as chat:
        offer = ApprovalOffer("ab12cd", ("allow-once", "deny"), "exec: touch x")
        await chat.gateway.deliver(OutboundMessage("webchat", "web-later", "Approval needed (ab12cd)", approval=offer), None, notice=True)
        peer, _ = chat.page("web-later")
        kept = await peer.wait_for(lambda f: f["type"] == "message")
        assert kept["notice"] is True and kept["text"].endswith("Approval needed (ab12cd)")
        assert kept["approval"] == {"id": "ab12cd", "choices": ["allow-once", "deny"], "summary": "exec: touch x"}
        second, _ = chat.page("web-later")  # delivered once, not again
        await second.wait_for(lambda f: f["type"] == "welcome")
        assert not second.of_type("message")
        peer.disconnect()
        second.disconnect()


async def test_a_reply_the_only_page_failed_to_take_waits_for_the_next_page(tmp_path: Path) -> None:
    """A page whose socket died without a goodbye (a phone changing networks) is found out
    when a reply cannot reach it: the reply is kept, not lost."""
    async with Chat(await _kernel(tmp_path)) as chat:
        gone, _ = chat.page("web-flaky")
        await gone.wait_for(lambda f: f["type"] == "welcome")
        gone.closed = (1006, "")  # dead, but the channel does not know yet
        await chat.gateway.deliver(OutboundMessage("webchat", "web-flaky", "the answer you waited for"), None)
        back, _ = chat.page("web-flaky")
        kept = await back.wait_for(lambda f: f["type"] == "message")
        assert kept["text"] == "the answer you waited for"
        back.disconnect()


async def test_a_turn_shows_live_as_deltas_and_tool_lines_and_a_gone_page_is_dropped(tmp_path: Path) -> None:
    async with Chat(await _kernel(tmp_path)) as chat:
        peer, served = chat.page("web-live")
        await peer.wait_for(lambda f: f["type"] == "welcome")
        message = InboundMessage("webchat", "web-live", "hi")
        show = chat.channel.live(message)
        await show(TextDelta("Let me "))
        await show(ToolCallStarted("exec", '{"command": "ls"}', "c1"))
        await show(TextDelta("done"))
        assert peer.sent[1:] == [
            {"type": "delta", "text": "Let me "},
            {"type": "tool", "name": "exec", "summary": '{"command": "ls"}'},
            {"type": "delta", "text": "done"},
        ]
        await peer.close(1001)  # the browser went away without a goodbye
        await show(TextDelta(" more"))  # dropped quietly, the turn goes on
        await asyncio.wait_for(served, 30)
        assert chat.channel._peers == {}


async def test_an_approval_button_is_an_approve_command_from_the_owner(tmp_path: Path) -> None:
    async with Chat(await _kernel(tmp_path)) as chat:
        peer, _ = chat.page("web-ap")
        peer.page_sends({"type": "send", "text": "/approve zz99zz allow-once"})
        answer = await peer.wait_for(lambda f: f["type"] == "message")
        assert answer["notice"] is True and answer["approval"] is None  # the gateway's answer (no approval waits here)
        assert chat.received == []  # a command: answered by the gateway, never a turn
        peer.disconnect()


async def test_the_routes_are_the_page_its_files_and_the_socket_of_the_kernels_own_channel(tmp_path: Path) -> None:
    kernel = await _kernel(tmp_path)
    offered = await kernel.collect("clawbot_web_routes")
    routes = {c.value.path: c.value for c in offered}
    assert set(routes) == {"/chat/", "/chat/app.js", "/chat/app.css", "/chat/ws"}
    assert isinstance(routes["/chat/"], WebPage) and routes["/chat/"].content_type.startswith("text/html")
    assert routes["/chat/app.js"].body == (STATIC / "app.js").read_bytes()
    assert routes["/chat/app.css"].content_type.startswith("text/css")
    socket = routes["/chat/ws"]
    assert isinstance(socket, WebSocketRoute)
    (channel,) = [c for c in kernel.channels if c.name == "webchat"]
    assert socket.handler == channel.serve  # the socket feeds this kernel's channel
    other = await build_kernel(tmp_path / "other", plugins={"webchat": webchat_plugin})
    (theirs,) = [c for c in other.channels if c.name == "webchat"]
    assert theirs is not channel


async def test_a_disabled_web_chat_serves_nothing(tmp_path: Path) -> None:
    kernel = await _kernel(tmp_path, "[channels.webchat]\nenabled = false\n")
    assert await kernel.collect("clawbot_web_routes") == []


def test_the_page_inserts_what_it_is_sent_as_text_and_loads_nothing_from_elsewhere() -> None:
    script = (STATIC / "app.js").read_text()
    for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function"):
        assert sink not in script, sink
    page = (STATIC / "index.html").read_text()
    assert not re.search(r"(src|href)=\"(https?:)?//", page)
    assert "<script>" not in page and "style=" not in page  # nothing inline: the strict CSP forbids it
    assert "clawbot status" in page and "gateway/token" in page  # where the token is
    assert "localStorage.setItem(TOKEN_KEY" not in script and "sessionStorage.setItem(TOKEN_KEY" in script
