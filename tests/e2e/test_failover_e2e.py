"""Failover end to end: the fake serves each API's real error responses, the official SDKs
raise their own exceptions, the providers classify them, and the kernel rotates keys,
retries, lowers the thinking level, falls back or compacts."""

from __future__ import annotations

import json
import time

import pytest
from clawbot import CompactionResult, CompactionStrategy, ProviderError
from clawbot.agent.conversation import Conversation
from clawbot.agent.models import ModelChoice
from clawbot.auth_profiles import key_fingerprint
from clawbot.sessions.summary import render_summary
from clawbot.testing import plugin_from_hooks
from clawbot.testing.fake_llm import ToolCallSpec

from .e2etools import (
    KEY,
    KINDS,
    MODEL,
    PRIMARY_KEY,
    PROVIDER_NAME,
    auth_keys,
    call,
    make_provider,
    providers_plugin,
    result,
    said,
    start,
    thinking_of,
    tools_plugin,
    transcript_lines,
    transcript_path,
    user,
    wire_history,
    workspace_config,
)


def second_profile(kind: str) -> str:
    return f'\n[[auth.profiles]]\nprovider = "{PROVIDER_NAME[kind]}"\nid = "second"\napi_key = "sk-second"\n'


class Sleeps(list):
    """``caller_sleep`` for tests: remembers the back-off delays, returns at once."""

    async def __call__(self, seconds: float) -> None:
        self.append(seconds)


def auth_state(kernel) -> dict:
    return json.loads((kernel.paths.root / "auth-state.json").read_text(encoding="utf-8"))


def primary_health(kernel, kind: str) -> dict:
    """The stored health of the primary key: kept under its fingerprint, never the key."""
    return auth_state(kernel)[f"{PROVIDER_NAME[kind]}/default#{key_fingerprint(PRIMARY_KEY)}"]


@pytest.mark.parametrize("fault", ["auth", "rate_limit"])
@pytest.mark.parametrize("kind", KINDS)
async def test_a_rejected_or_rate_limited_key_rotates_to_the_next_profile(make_kernel, fake_llm, workspace, kind, fault) -> None:
    fake_llm.fail(fault)
    fake_llm.reply("Hello from the second key.")
    fake_llm.reply("Still the second key.")
    kernel, conversation, _ = await start(make_kernel, kind, fake_llm, workspace, config=second_profile(kind))

    turn = await conversation.send(KEY, "hi")

    assert turn.text == "Hello from the second key." and turn.auth_profile == "second"
    assert auth_keys(fake_llm.requests) == [PRIMARY_KEY, "sk-second"]
    health = primary_health(kernel, kind)
    # a rejected key rests ~1 min; a rate-limited one as long as the provider asked (1 s)
    rest = 60 if fault == "auth" else 1
    assert health["failures"] == 1 and time.time() + rest - 10 < health["unusable_until"] <= time.time() + rest
    # the session sticks to the key that worked
    assert kernel.sessions.get(KEY).auth_profile == "second"
    await conversation.send(KEY, "again")
    assert auth_keys(fake_llm.requests) == [PRIMARY_KEY, "sk-second", "sk-second"]


@pytest.mark.parametrize("kind", KINDS)
async def test_billing_error_disables_the_profile_for_hours(make_kernel, fake_llm, workspace, kind) -> None:
    fake_llm.fail("billing")
    fake_llm.reply("Served by the second key.")
    kernel, conversation, _ = await start(make_kernel, kind, fake_llm, workspace, config=second_profile(kind))

    turn = await conversation.send(KEY, "hi")

    assert turn.text == "Served by the second key." and turn.auth_profile == "second"
    assert auth_keys(fake_llm.requests) == [PRIMARY_KEY, "sk-second"]
    health = primary_health(kernel, kind)
    assert health["billing_failures"] == 1 and health["unusable_until"] > time.time() + 4.9 * 3600
    assert [p.id for p in kernel.auth.candidates(PROVIDER_NAME[kind])] == ["second"]


@pytest.mark.parametrize("kind", KINDS)
async def test_billing_error_without_another_key_tells_the_user(make_kernel, fake_llm, workspace, kind) -> None:
    fake_llm.fail("billing")
    _, conversation, _ = await start(make_kernel, kind, fake_llm, workspace)
    with pytest.raises(ProviderError) as info:
        await conversation.send(KEY, "hi")
    assert info.value.kind == "billing" and "billing" in info.value.user_message
    assert "not tried again until " in info.value.user_message and "(in 5 h)" in info.value.user_message
    assert len(fake_llm.requests) == 1  # not retried


FALLBACK = {"anthropic": "claude-test-small", "openai-chat": "gpt-test-mini", "openai-responses": "gpt-test-mini"}


@pytest.mark.parametrize("kind", KINDS)
async def test_the_fallback_model_answers_when_the_primary_keeps_failing(make_kernel, fake_llm, workspace, kind) -> None:
    fake_llm.fail("server_error", times=4, model=MODEL[kind])
    fake_llm.reply("Answer from the fallback.")
    fake_llm.reply("The primary is back.")
    sleeps = Sleeps()
    kernel, conversation, _ = await start(make_kernel, kind, fake_llm, workspace, fallback_models=[FALLBACK[kind]], caller_sleep=sleeps)

    turn = await conversation.send(KEY, "hi")

    assert turn.text == "Answer from the fallback."
    assert turn.model == f"{PROVIDER_NAME[kind]}/{FALLBACK[kind]}"
    assert [r.model for r in fake_llm.requests] == [MODEL[kind]] * 4 + [FALLBACK[kind]]
    assert sleeps == [1.0, 2.0, 4.0]  # three retries of the server error, then the next model
    saved = transcript_lines(transcript_path(kernel))[-1]["message"]
    assert saved["model"] == FALLBACK[kind] and saved["content"][0]["text"] == "Answer from the fallback."
    # the fallback is for that call only: the next turn starts with the primary again
    turn = await conversation.send(KEY, "and now?")
    assert turn.text == "The primary is back." and fake_llm.requests[-1].model == MODEL[kind]


async def test_fallback_to_another_provider_gets_the_whole_history_in_its_own_format(make_kernel, fake_llm, workspace) -> None:
    (workspace / "notes.txt").write_text("remember the milk")
    anthropic = make_provider("anthropic", fake_llm)
    openai = make_provider("openai-chat", fake_llm)
    kernel = await make_kernel(plugins={"llm": providers_plugin(anthropic, openai), "tools": tools_plugin()}, config=workspace_config(workspace))
    conversation = Conversation(
        kernel,
        ModelChoice(anthropic, "claude-test"),
        "main",
        fallbacks=[ModelChoice(openai, "gpt-test")],
        caller_sleep=Sleeps(),
        services=None,
    )
    fake_llm.reply("Let me read it.", tool_calls=[ToolCallSpec("read", {"path": "notes.txt"}, id="toolu_01NOTES")])
    fake_llm.reply("It says: remember the milk.")
    await conversation.send(KEY, "what is in notes.txt?")

    fake_llm.fail("overloaded", times=11, model="claude-test")
    fake_llm.reply("You asked about notes.txt.")
    turn = await conversation.send(KEY, "what did I ask?")

    assert turn.text == "You asked about notes.txt." and turn.model == "openai/gpt-test"
    last = fake_llm.requests[-1]
    assert last.api == "openai-chat" and last.model == "gpt-test"
    assert [r.api for r in fake_llm.requests[2:-1]] == ["anthropic"] * 11
    assert wire_history(last) == [
        user("what is in notes.txt?"),
        said("Let me read it."),
        call("toolu_01NOTES", "read", {"path": "notes.txt"}),
        result("toolu_01NOTES", "remember the milk"),
        said("It says: remember the milk."),
        user("what did I ask?"),
    ]


@pytest.mark.parametrize("kind", KINDS)
async def test_overloaded_is_retried_after_a_back_off_then_succeeds(make_kernel, fake_llm, workspace, kind) -> None:
    fake_llm.fail("overloaded")
    fake_llm.fail("overloaded", retry_after=3)
    fake_llm.reply("Finally.")
    sleeps = Sleeps()
    _, conversation, _ = await start(make_kernel, kind, fake_llm, workspace, caller_sleep=sleeps)

    turn = await conversation.send(KEY, "hi")

    assert turn.text == "Finally." and turn.model == f"{PROVIDER_NAME[kind]}/{MODEL[kind]}"
    assert sleeps == [2.5, 3.0]  # the default back-off, then the server's retry-after
    assert len(fake_llm.requests) == 3 and auth_keys(fake_llm.requests) == [PRIMARY_KEY] * 3
    assert [wire_history(r) for r in fake_llm.requests] == [[user("hi")]] * 3


# How each API says "this model cannot think": Anthropic rejects the thinking parameter with
# invalid_request_error, OpenAI with a 400 about reasoning_effort / reasoning.effort.
THINKING_REJECTED = {
    "anthropic": dict(kind="context_length", message="'claude-test' does not support thinking."),
    "openai-chat": dict(
        kind="server_error",
        status=400,
        message="Unsupported parameter: 'reasoning_effort' is not supported with this model.",
    ),
    "openai-responses": dict(
        kind="server_error",
        status=400,
        message="Unsupported parameter: 'reasoning.effort' is not supported with this model.",
    ),
}
THINKING_SENT = {
    "anthropic": [16_000, 10_000, 4096, 1024, None],
    "openai-chat": ["high", "medium", "low", "minimal", None],
    "openai-responses": ["high", "medium", "low", "minimal", None],
}


@pytest.mark.parametrize("kind", KINDS)
async def test_a_rejected_thinking_level_is_lowered_until_the_model_accepts(make_kernel, fake_llm, workspace, kind) -> None:
    fault = dict(THINKING_REJECTED[kind])
    fake_llm.fail(fault.pop("kind"), times=4, **fault)
    fake_llm.reply("Answer without thinking.")
    _, conversation, _ = await start(make_kernel, kind, fake_llm, workspace, config='thinking = "high"\n')

    turn = await conversation.send(KEY, "think hard")

    assert turn.text == "Answer without thinking."
    assert [thinking_of(r) for r in fake_llm.requests] == THINKING_SENT[kind]


SUMMARY = "The user asked about cats; the assistant said cats are great."


class KeepLast(CompactionStrategy):
    """Keeps the last message, summarises the rest in one line."""

    name = "keep-last"

    def __init__(self) -> None:
        self.seen: list[int] = []

    async def compact(self, request):
        self.seen.append(len(request.messages))
        return CompactionResult(SUMMARY, first_kept_index=len(request.messages) - 1, tokens_before=5000, tokens_after=40)


@pytest.mark.parametrize("kind", KINDS)
async def test_context_overflow_compacts_the_history_and_retries(make_kernel, fake_llm, workspace, kind) -> None:
    strategy = KeepLast()
    fake_llm.reply("Cats are great.")
    kernel, conversation, _ = await start(
        make_kernel,
        kind,
        fake_llm,
        workspace,
        plugins={"compaction": plugin_from_hooks(clawbot_compaction_strategies=lambda ctx: [strategy])},
    )
    await conversation.send(KEY, "tell me about cats")
    fake_llm.fail("context_length")  # faults go before any queued reply: queue it now
    fake_llm.reply("Still here after compaction.")

    turn = await conversation.send(KEY, "and dogs?")

    assert turn.text == "Still here after compaction."
    assert strategy.seen == [3]
    entries = transcript_lines(transcript_path(kernel))[1:]
    kinds = [e["type"] if e["type"] != "message" else e["message"]["role"] for e in entries]
    assert kinds == ["user", "assistant", "user", "compaction", "assistant"]
    compaction = entries[3]
    assert [m["content"][0]["text"] for m in compaction["kept"]] == ["and dogs?"]  # on the compaction's own line
    rejected, retried = fake_llm.requests[1:3]
    assert wire_history(rejected) == [user("tell me about cats"), said("Cats are great."), user("and dogs?")]
    summary = render_summary(SUMMARY, compaction["id"])  # fenced, as untrusted text
    assert summary.startswith("[Summary of the earlier conversation]\n<<<BEGIN UNTRUSTED") and SUMMARY in summary
    assert wire_history(retried) == [user(summary), user("and dogs?")]
    assert compaction["summary"] == SUMMARY and compaction["strategy"] == "keep-last"
    assert (compaction["tokens_before"], compaction["tokens_after"]) == (5000, 40)

    # the next turn starts from the compacted history
    await conversation.send(KEY, "and birds?")
    assert wire_history(fake_llm.requests[3]) == [user(summary), user("and dogs?"), said("Still here after compaction."), user("and birds?")]


@pytest.mark.parametrize("kind", KINDS)
async def test_every_key_rejected_ends_with_the_short_auth_message(make_kernel, fake_llm, workspace, kind) -> None:
    fake_llm.fail("auth", times=2)
    kernel, conversation, _ = await start(make_kernel, kind, fake_llm, workspace, config=second_profile(kind))
    with pytest.raises(ProviderError) as info:
        await conversation.send(KEY, "hi")
    assert info.value.kind == "auth" and info.value.user_message.startswith("The model provider rejected the API key")
    assert sorted(auth_keys(fake_llm.requests)) == sorted([PRIMARY_KEY, "sk-second"])
    assert kernel.auth.candidates(PROVIDER_NAME[kind]) == []  # both cooling down


DROPPED_TEXT = "Hello there, this is a longer answer that streams in several pieces."


@pytest.mark.parametrize("kind", KINDS)
async def test_a_dropped_stream_is_retried_and_only_the_whole_reply_is_kept(make_kernel, fake_llm, workspace, kind) -> None:
    fake_llm.fail("dropped_stream", after_events=5)
    fake_llm.reply(DROPPED_TEXT)
    sleeps = Sleeps()
    kernel, conversation, _ = await start(make_kernel, kind, fake_llm, workspace, caller_sleep=sleeps)

    turn = await conversation.send(KEY, "hi")

    assert turn.text == DROPPED_TEXT and len(fake_llm.requests) == 2 and sleeps == [0.5]
    messages = [line["message"] for line in transcript_lines(transcript_path(kernel))[1:]]
    assert [m["role"] for m in messages] == ["user", "assistant"]  # no half answer saved
    assert messages[1]["content"] == [{"type": "text", "text": DROPPED_TEXT}]


@pytest.mark.parametrize("kind", KINDS)
async def test_text_streamed_before_a_dropped_connection_is_not_shown_twice(make_kernel, fake_llm, workspace, kind) -> None:
    """KNOWN BUG (agent/failover.py): the retry streams the reply from the start again, so a
    streaming channel shows "Hello there,Hello there, this is ..."."""
    fake_llm.fail("dropped_stream", after_events=5)
    fake_llm.reply(DROPPED_TEXT)
    deltas: list[str] = []

    async def on_text(delta: str) -> None:
        deltas.append(delta)

    _, conversation, _ = await start(make_kernel, kind, fake_llm, workspace, caller_sleep=Sleeps())
    turn = await conversation.send(KEY, "hi", on_text=on_text)
    assert turn.text == DROPPED_TEXT
    assert "".join(deltas) == DROPPED_TEXT


@pytest.mark.parametrize("kind", KINDS)
async def test_compaction_in_the_middle_of_a_tool_loop_keeps_the_history_valid(make_kernel, fake_llm, workspace, kind) -> None:
    """KNOWN BUG (agent/conversation.py, Conversation._compact): when the kept part starts
    with a tool result, the retried request carries a result without its call, which every
    API rejects (Anthropic "unexpected tool_use_id", OpenAI "messages with role 'tool' must
    be a response to a preceding message with 'tool_calls'")."""
    from clawbot.testing.fake_llm import Reply

    (workspace / "notes.txt").write_text("remember the milk")

    def read_then_overflow(request):
        fake_llm.fail("context_length")  # the next request (after the tool ran) overflows
        return Reply(tool_calls=[ToolCallSpec("read", {"path": "notes.txt"})])

    fake_llm.queue(read_then_overflow)
    fake_llm.reply("It says: remember the milk.")
    kernel, conversation, _ = await start(
        make_kernel,
        kind,
        fake_llm,
        workspace,
        plugins={"compaction": plugin_from_hooks(clawbot_compaction_strategies=lambda ctx: [KeepLast()])},
    )

    turn = await conversation.send(KEY, "what is in notes.txt?")

    assert turn.text == "It says: remember the milk." and len(fake_llm.requests) == 3
    wire_history(fake_llm.requests[2])  # checks that every tool result follows its call
    # on disk too, the stretch after the compaction entry answers only calls it contains
    entries = transcript_lines(transcript_path(kernel))
    start_at = max(i for i, e in enumerate(entries) if e["type"] == "compaction")
    kept = [e["message"] for e in entries[start_at + 1 :] if e["type"] == "message"]
    call_ids = {b["id"] for m in kept for b in m["content"] if b["type"] == "tool_call"}
    assert {m["tool_call_id"] for m in kept if m["role"] == "tool_result"} <= call_ids
