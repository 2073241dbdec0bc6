"""Heartbeats through a real gateway: the turn, its reply, its model, its usage, its hook.

Real kernel, gateway, lanes and conversation; the model streams scripted replies in pieces
and records its requests. Time is driven by calling :meth:`HeartbeatService.tick` with the
time it is: nothing sleeps.
"""

from __future__ import annotations

import logging
import os
from datetime import UTC, datetime, timedelta

import pytest
from clawbot import LLMProvider, Message, ModelInfo, Role, StopReason, TextBlock, TextDelta, Usage
from clawbot.agent.inbound import SYSTEM_EVENT_LABEL
from clawbot.gateway.session_commands import status_text
from clawbot.paths import expand_user_path
from clawbot.testing import FakeChannel, plugin_from_hooks
from clawbot.types import ChannelCapabilities
from clawbot_automation.heartbeat import HeartbeatService

from .chatkit import open_chat

START = datetime(2025, 3, 3, 9, 0, tzinfo=UTC)
PROMPT = "Check HEARTBEAT.md; reply HEARTBEAT_OK if nothing needs attention."


class Streaming(LLMProvider):
    """Streams each scripted reply through ``on_text`` in ``size``-character pieces; records requests."""

    name = "streaming"

    def __init__(self, *replies: str, size: int = 3) -> None:
        self.replies, self.size, self.requests = list(replies), size, []

    def model_info(self, model_id: str) -> ModelInfo:
        return ModelInfo(model_id, context_window=200_000)

    async def complete(self, request, on_text=None):
        self.requests.append(request)
        text = self.replies.pop(0) if self.replies else "done"
        for start in range(0, len(text), self.size):
            if on_text is not None:
                await on_text(text[start : start + self.size])
        return Message(Role.ASSISTANT, (TextBlock(text),), usage=Usage(100, 20), stop_reason=StopReason.END_TURN)


class LiveChannel(FakeChannel):
    """Shows turns live: every activity is recorded."""

    def __init__(self) -> None:
        super().__init__("fake")
        self.activity: list[object] = []

    def live(self, message):
        return self._show

    async def _show(self, event) -> None:
        self.activity.append(event)

    def shown(self) -> str:
        return "".join(e.text for e in self.activity if isinstance(e, TextDelta))


def config(**heartbeat: object) -> str:
    values = {"prompt": PROMPT, **heartbeat}
    lines = "\n".join(f"{k} = {v!r}" if isinstance(v, str) else f"{k} = {v}" for k, v in values.items())
    return f"\n[agents.defaults.heartbeat]\n{lines.replace(chr(39), chr(34))}\n"


async def chat(make_kernel, provider, channel, checklist: str | None = "- check the inbox\n", **heartbeat: object):
    ended: list[object] = []
    plugins = {
        "llm": plugin_from_hooks(clawbot_llm_providers=lambda ctx: [provider]),
        "ends": plugin_from_hooks(clawbot_agent_end=lambda event: ended.append(event)),
    }
    opened = await open_chat(make_kernel, channel, provider, config=config(**heartbeat), plugins=plugins)
    workspace = expand_user_path(opened.kernel.config.agent_workspace("main"), opened.kernel.env)
    workspace.mkdir(parents=True, exist_ok=True)
    if checklist is not None:
        (workspace / "HEARTBEAT.md").write_text(checklist)
    return opened, HeartbeatService(), ended


async def beat(service, gateway, now=START):
    beats = await service.tick(gateway.runtime.services.host, now)
    for b in beats:
        if b.answered is not None:
            await b.answered
    return beats


REPLIES = ["HEARTBEAT_OK", "**HEARTBEAT_OK**", "HEARTBEAT_OK. All quiet, nothing due today.", "Nothing new. HEARTBEAT_OK"]


@pytest.mark.parametrize("size", [1, 2, 5, 50])
@pytest.mark.parametrize("reply", REPLIES)
async def test_heartbeat_ok_never_reaches_the_channel_also_when_streamed_in_pieces(make_kernel, reply, size) -> None:
    channel = LiveChannel()
    provider = Streaming("hello", reply, size=size)
    opened, service, _ = await chat(make_kernel, provider, channel)
    try:
        await channel.inject("hi", from_owner=True)  # the main session's last chat
        sent_before, shown_before = len(channel.sent), channel.shown()
        beats = await beat(service, opened.gateway)
        assert [b.status for b in beats] == ["ran"]
        assert len(provider.requests) == 2  # the heartbeat did call the model
        assert len(channel.sent) == sent_before and channel.shown() == shown_before
        assert not any("HEARTBEAT" in m.text for m in channel.sent)
    finally:
        await opened.close()


async def test_a_longer_reply_goes_to_the_last_chat_as_clawbots_event_with_the_heartbeat_model(make_kernel) -> None:
    channel = LiveChannel()
    provider = Streaming("hello", "Reminder: the dentist called back, you have an appointment at 15:00 today.")
    opened, service, ended = await chat(make_kernel, provider, channel, model="streaming/cheap")
    try:
        await channel.inject("hi", peer_id="user-7", from_owner=True)
        await beat(service, opened.gateway)
        assert [m.peer_id for m in channel.sent] == ["user-7", "user-7"]
        assert channel.sent[-1].text.startswith("Reminder: the dentist")
        request = provider.requests[-1]
        assert [r.model for r in provider.requests] == ["m", "cheap"]  # the heartbeat's own model, this turn only
        asked = request.messages[-1].text
        assert SYSTEM_EVENT_LABEL in asked and PROMPT in asked  # clawbot's event, not the user's words
        assert [(e.kind, e.session_key) for e in ended] == [("chat", "agent:main:main"), ("heartbeat", "agent:main:main")]
        info = opened.kernel.sessions.get("agent:main:main")
        assert (info.turns, info.heartbeats, info.heartbeat_usage) == (2, 1, Usage(100, 20))
        status = await status_text(opened.kernel, opened.runtime, "agent:main:main")
        assert "Heartbeats: 1 runs, 120 tokens of these" in status
    finally:
        await opened.close()


@pytest.mark.parametrize(
    "checklist",
    [None, "", "   \n\n", "# HEARTBEAT.md\n\n# keep it empty\n## Tasks\n", "<!-- nothing yet -->\n- \n- [ ]\n"],
    ids=["missing", "empty", "blank", "headings-and-comments", "html-comment-and-bare-items"],
)
async def test_an_empty_or_missing_checklist_makes_no_model_call(make_kernel, fake_channel, checklist) -> None:
    provider = Streaming()
    opened, service, ended = await chat(make_kernel, provider, fake_channel, checklist=checklist)
    try:
        beats = await beat(service, opened.gateway)
        assert [(b.status, b.reason) for b in beats] == [("skipped", "HEARTBEAT.md is missing or asks for nothing")]
        assert provider.requests == [] and ended == [] and fake_channel.sent == []
        assert service.next_due() == START + timedelta(minutes=30)
    finally:
        await opened.close()


async def test_a_heartbeat_md_that_is_a_fifo_skips_every_slot_warns_once_and_chats_go_on(make_kernel, caplog) -> None:
    channel = LiveChannel()
    provider = Streaming("hello")
    opened, service, ended = await chat(make_kernel, provider, channel, checklist=None)
    workspace = expand_user_path(opened.kernel.config.agent_workspace("main"), opened.kernel.env)
    os.mkfifo(workspace / "HEARTBEAT.md")
    try:
        with caplog.at_level(logging.INFO, logger="clawbot_automation.heartbeat"):
            first = await beat(service, opened.gateway)
            second = await beat(service, opened.gateway, START + timedelta(minutes=30))
        reason = "HEARTBEAT.md is not read: it is not a regular file (a FIFO)"
        assert [(b.status, b.reason) for b in first + second] == [("skipped", reason)] * 2
        warnings = [r for r in caplog.records if r.levelno == logging.WARNING and "HEARTBEAT.md" in r.getMessage()]
        assert len(warnings) == 1 and "not a regular file (a FIFO)" in warnings[0].getMessage()
        assert provider.requests == [] and ended == []
        await channel.inject("hi")
        assert [m.text for m in channel.sent] == ["hello"]
    finally:
        await opened.close()


async def test_a_busy_main_session_is_skipped_without_a_model_call_and_runs_at_the_next_slot(make_kernel) -> None:
    channel = LiveChannel()
    gate_open = __import__("asyncio").Event()

    class Slow(Streaming):
        async def complete(self, request, on_text=None):
            if len(self.requests) == 0:
                self.requests.append(request)
                await gate_open.wait()
                return Message(Role.ASSISTANT, (TextBlock("answered"),), usage=Usage(1, 1), stop_reason=StopReason.END_TURN)
            return await super().complete(request, on_text)

    provider = Slow("Your 15:00 appointment is in an hour: leave by 14:20 to be on time, traffic is heavy.")
    opened, service, _ = await chat(make_kernel, provider, channel)
    try:
        answered = await channel.inject("a long question", wait=False, from_owner=True)
        del answered
        from .chatkit import eventually

        await eventually(lambda: len(provider.requests) == 1)
        beats = await service.tick(opened.gateway.runtime.services.host, START)
        assert [(b.status, b.reason) for b in beats] == [("skipped", "the main session is busy")]
        assert len(provider.requests) == 1
        assert await service.tick(opened.gateway.runtime.services.host, START + timedelta(minutes=10)) == []  # not before the next slot
        gate_open.set()
        await eventually(lambda: not opened.gateway.turn_running("agent:main:main"))
        beats = await beat(service, opened.gateway, START + timedelta(minutes=30))
        assert [b.status for b in beats] == ["ran"] and len(provider.requests) == 2
        assert channel.sent[-1].text.startswith("Your 15:00 appointment")
    finally:
        await opened.close()


async def test_target_none_and_no_chat_yet_deliver_nowhere(make_kernel) -> None:
    for target in ("last", "none"):  # first: nobody wrote yet (a chat is remembered across restarts)
        channel = LiveChannel()
        provider = Streaming("hello", "Two open follow-ups in memory/ need an answer this week; I drafted both for you.")
        opened, service, _ = await chat(make_kernel, provider, channel, target=target)
        try:
            if target == "none":
                await channel.inject("hi", from_owner=True)
            sent = len(channel.sent)
            beats = await beat(service, opened.gateway)
            assert [b.status for b in beats] == ["ran"]
            assert len(channel.sent) == sent and "follow-ups" not in channel.shown()
        finally:
            await opened.close()


async def test_the_last_chat_survives_a_restart_and_a_reply_with_nowhere_to_go_is_logged_and_kept(make_kernel, caplog) -> None:
    before = LiveChannel()
    opened, service, _ = await chat(make_kernel, Streaming("Nothing due, but here is a note for nobody.", "hello"), before)
    try:
        lost = await beat(service, opened.gateway)  # nobody wrote yet: the reply has nowhere to go
        assert [b.status for b in lost] == ["ran"]
        (undelivered,) = opened.gateway.undelivered
        assert "heartbeat" in undelivered["what"] and "no chat" in undelivered["what"]
        assert any("went nowhere" in r.getMessage() and r.levelname == "WARNING" for r in caplog.records)
        await before.inject("hi", peer_id="user-7", from_owner=True)  # the owner: only their direct chat is the main session
    finally:
        await opened.close()
    after = LiveChannel()  # the gateway restarted: the same channel, a new process
    opened, service, _ = await chat(make_kernel, Streaming("Reminder: the dentist called back, 15:00 today."), after)
    try:
        await beat(service, opened.gateway)
        assert [(m.peer_id, m.text) for m in after.sent] == [("user-7", "Reminder: the dentist called back, 15:00 today.")]
        assert not opened.gateway.undelivered
    finally:
        await opened.close()


async def test_a_failing_heartbeat_is_logged_and_the_gateway_goes_on(make_kernel, caplog) -> None:
    channel = LiveChannel()

    class Failing(Streaming):
        async def complete(self, request, on_text=None):
            if len(self.requests) == 1:
                self.requests.append(request)
                raise RuntimeError("the provider broke")
            return await super().complete(request, on_text)

    provider = Failing("hello", "later")
    opened, service, _ = await chat(make_kernel, provider, channel)
    try:
        await channel.inject("hi", from_owner=True)
        await beat(service, opened.gateway)
        assert [m.text for m in channel.sent] == ["hello"]  # no failure notice for a heartbeat nobody asked for
        assert "the provider broke" in caplog.text
        await channel.inject("still there?", from_owner=True)
        assert channel.sent[-1].text == "later"
    finally:
        await opened.close()


class RequestsOnly(LiveChannel):
    """A surface that only answers open requests, like the control API's clients."""

    capabilities = ChannelCapabilities(unprompted=False)


async def test_a_chat_that_only_answers_open_requests_is_never_the_heartbeats_target(make_kernel) -> None:
    """A control API client hears only the turns it asked for: a heartbeat reply sent there
    would be lost, so such a chat is never the "last chat" a heartbeat reports to."""
    channel = RequestsOnly()
    provider = Streaming("hello", "Reminder: call the dentist back before 15:00.")
    opened, service, _ = await chat(make_kernel, provider, channel)
    try:
        await channel.inject("hi", peer_id="client-1", from_owner=True)
        await beat(service, opened.gateway)
        assert len(provider.requests) == 2  # the heartbeat ran
        assert [m.text for m in channel.sent] == ["hello"]  # its reply went nowhere
    finally:
        await opened.close()
