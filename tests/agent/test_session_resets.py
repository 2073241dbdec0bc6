"""Automatic session resets (``session.reset``): a message arriving for a stale session ends
it the way /new does (old transcript kept, hooks fired) and starts a fresh one.

Real turns: the Anthropic provider (official SDK) on the fake LLM server, real session
files. The conversation's clock is moved forward; the session's last activity is the real
time its first turn was recorded.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from clawbot import InboundMessage
from clawbot.agent.conversation import Conversation
from clawbot.agent.models import ModelChoice
from clawbot.testing import plugin_from_hooks

from ..e2e.e2etools import MODEL, make_provider, providers_plugin
from ..gateway.chatkit import open_chat
from .scripted import ScriptedProvider

KEY = "agent:main:main"
ZONE = "Asia/Kolkata"  # UTC+05:30: the reset hour is counted in the user's zone, not UTC


def _hour_from_now(hours: int) -> int:
    from zoneinfo import ZoneInfo

    return (datetime.now(ZoneInfo(ZONE)) + timedelta(hours=hours)).hour


async def _start(make_kernel, fake_llm, reset: str):
    events: list[tuple[str, str, str]] = []
    hooks = plugin_from_hooks(
        clawbot_session_start=lambda event: events.append(("start", event.session_id, event.reason)),
        clawbot_session_end=lambda event: events.append(("end", event.session_id, event.reason)),
    )
    provider = make_provider("anthropic", fake_llm)
    config = f'[agents.defaults]\ntimezone = "{ZONE}"\n\n[session.reset]\n{reset}\n'
    kernel = await make_kernel(plugins={"llm": providers_plugin(provider), "hooks": hooks}, config=config)
    moments = [datetime.now(UTC)]
    conversation = Conversation(kernel, ModelChoice(provider, MODEL["anthropic"]), "main", services=None, clock=lambda: moments[0])
    return kernel, conversation, provider, events, moments


def _path(kernel, session_id: str) -> Path:
    return kernel.sessions.root / "main" / f"{session_id}.jsonl"


# (why, policy, how far the clock moves before the second message, the reset's reason or None)
CASES = [
    ("idle, past the limit", 'mode = "idle"\nidle_minutes = 60', timedelta(minutes=61), "idle for 60 minutes"),
    ("idle, within it", 'mode = "idle"\nidle_minutes = 60', timedelta(minutes=59), None),
    # SOON: the hour after the next one, so the reset time is 60 to 120 minutes away
    ("daily, past the reset hour", 'mode = "daily"\nat_hour = SOON', timedelta(hours=3), "daily reset at SOON:00"),
    ("daily, before it", 'mode = "daily"\nat_hour = SOON', timedelta(minutes=50), None),
    ("daily, a day later", 'mode = "daily"\nat_hour = 4', timedelta(hours=25), "daily reset at 04:00"),
    ("off, a year later", 'mode = "off"', timedelta(days=365), None),
]


@pytest.mark.parametrize(("why", "policy", "later", "reason"), CASES, ids=[c[0] for c in CASES])
async def test_a_stale_session_ends_and_the_message_starts_a_fresh_one(make_kernel, fake_llm, why, policy, later, reason) -> None:
    soon = _hour_from_now(2)
    policy, reason = policy.replace("SOON", str(soon)), reason and reason.replace("SOON", f"{soon:02d}")
    kernel, conversation, provider, events, moments = await _start(make_kernel, fake_llm, policy)
    fake_llm.reply("Your locker is 4417.")
    fake_llm.reply("Hello again.")
    await conversation.send(KEY, "My locker code is 4417.")
    first = kernel.sessions.get(KEY).session_id
    moments[0] += later

    result = await conversation.send(KEY, "Good morning")
    assert result.text == "Hello again."
    second = kernel.sessions.get(KEY).session_id
    if reason is None:
        assert second == first and events == [("start", first, "first message")]
        assert "4417" in str(fake_llm.requests[-1].body)
        assert result.notices == ()
    else:
        assert second != first
        assert events == [("start", first, "first message"), ("end", first, reason), ("start", second, reason)]
        assert "4417" not in str(fake_llm.requests[-1].body)  # the fresh session starts empty
        # The user is told, once, where the old conversation went (no folder of the host's);
        # the model is not told.
        assert result.notices == (
            f"Started a new session ({reason}): I no longer have the earlier conversation. "
            f"It is kept (transcript {_path(kernel, first).name} in clawbot's sessions folder); what was saved to memory is still there.",
        )
        assert "Started a new session" not in str(fake_llm.requests[-1].body)
        assert "My locker code is 4417." in _path(kernel, first).read_text()  # the old transcript is kept
        assert "Good morning" in _path(kernel, second).read_text()
    await provider.aclose()


async def test_a_system_event_never_ends_the_session_it_reports_to(make_kernel, fake_llm) -> None:
    kernel, conversation, provider, events, moments = await _start(make_kernel, fake_llm, 'mode = "idle"\nidle_minutes = 5')
    await conversation.send(KEY, "Run the backup in the background.")
    first = kernel.sessions.get(KEY).session_id
    moments[0] += timedelta(hours=2)
    event = InboundMessage(channel="terminal", peer_id="owner", text="The backup finished.", system_event=True)
    await conversation.send(KEY, "The backup finished.", origin=event)
    assert kernel.sessions.get(KEY).session_id == first and len(events) == 1
    await conversation.send(KEY, "Hello?")  # the user's own message, hours later: a fresh session
    assert kernel.sessions.get(KEY).session_id != first
    await provider.aclose()


def _backdate(kernel, hours: int) -> None:
    """As if the user's last message came ``hours`` ago (the index is what the policy reads)."""
    path = kernel.sessions.root / "main" / "sessions.json"
    index = json.loads(path.read_text())
    earlier = (datetime.now(UTC) - timedelta(hours=hours)).isoformat(timespec="milliseconds")
    for field in ("updated_at", "last_user_at"):
        index[KEY][field] = earlier
    path.write_text(json.dumps(index))


async def test_system_events_do_not_keep_an_idle_session_awake(make_kernel, fake_llm) -> None:
    kernel, conversation, provider, events, moments = await _start(make_kernel, fake_llm, 'mode = "idle"\nidle_minutes = 60')
    await conversation.send(KEY, "Check the backup every few minutes.")
    first = kernel.sessions.get(KEY).session_id
    _backdate(kernel, 2)
    event = InboundMessage(channel="terminal", peer_id="owner", text="The backup is still running.", system_event=True)
    await conversation.send(KEY, "The backup is still running.", origin=event)  # a job reporting back, now
    assert kernel.sessions.get(KEY).session_id == first
    result = await conversation.send(KEY, "Hello?")  # two hours after the user's last message
    assert kernel.sessions.get(KEY).session_id != first
    assert events[-1] == ("start", kernel.sessions.get(KEY).session_id, "idle for 60 minutes")
    assert result.notices and "idle for 60 minutes" in result.notices[0]
    await provider.aclose()


async def test_the_chat_is_told_of_an_automatic_reset_before_the_reply(make_kernel, fake_channel) -> None:
    provider = ScriptedProvider("Noted.", "Good morning to you.")
    chat = await open_chat(make_kernel, fake_channel, provider, config='[session.reset]\nmode = "daily"\nat_hour = 4\n')
    conversation = await chat.runtime.conversation("main")
    await fake_channel.inject("My locker code is 4417.", from_owner=True)
    old = chat.kernel.sessions.list()[0]
    conversation.clock = lambda: datetime.now(UTC) + timedelta(hours=25)  # past the next 04:00
    await fake_channel.inject("Good morning", from_owner=True)
    await chat.close()
    notice, reply = fake_channel.sent[1:]
    assert reply.text == "Good morning to you." and not reply.notice
    assert notice.notice and notice.text.startswith("Started a new session (daily reset at 04:00): I no longer have the earlier conversation.")
    assert f"{old.session_id}.jsonl" in notice.text
    assert len([m for m in fake_channel.sent if m.notice]) == 1  # once, not on every message after it
