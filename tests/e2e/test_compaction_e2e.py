"""Compaction end to end: the real OpenAI provider on the fake LLM, real transcripts.

The history is compacted before a request that would not leave the reserve free (the
request the server then gets fits), on a context-overflow error (then retried once), and
with ``/compact``; the strategy gets the model through the kernel's ``summarize``. A
strategy that fails, or a summary the model cannot write, stores nothing and the session
goes on.
"""

from __future__ import annotations

import pytest
from clawbot import ProviderError
from clawbot.agent.compaction import compact_session
from clawbot.sessions.summary import render_summary
from clawbot.testing import plugin_from_hooks
from clawbot.testing.fake_llm.script import rough_tokens

from ..plugins_for_tests import AskTheModel, Misbehaving
from .e2etools import KEY, said, start, transcript_lines, transcript_path, user, wire_history

WINDOW = 16_000  # agents.defaults.context_tokens: the OpenAI plugin's 128,000 for gpt-test, capped
LIMIT = 12_000  # what a request may take: the window less the reserve
# (the memory flush, which would run first at these sizes, has tests of its own)
RESERVE = (
    f"context_tokens = {WINDOW}\n[agents.defaults.compaction]\nreserve_tokens_floor = {WINDOW - LIMIT}\n\n"
    "[agents.defaults.compaction.memory_flush]\nenabled = false\n"
)
BIG = "lorem ipsum dolor sit amet " * 900  # about 6,000 tokens


async def no_sleep(seconds: float) -> None:
    return None


def strategy_plugin(strategy) -> dict[str, object]:  # noqa: ANN001
    return {"compaction": plugin_from_hooks(clawbot_compaction_strategies=lambda ctx: [strategy])}


def compactions(kernel) -> list[dict]:  # noqa: ANN001
    return [e for e in transcript_lines(transcript_path(kernel))[1:] if e["type"] == "compaction"]


def entry_of(kernel, text: str) -> dict:  # noqa: ANN001
    """The first transcript entry holding the user message ``text``."""
    return next(e for e in transcript_lines(transcript_path(kernel))[1:] if e["type"] == "message" and e["message"]["content"][0].get("text") == text)


async def test_a_request_that_would_not_leave_the_reserve_free_is_compacted_before_it_is_sent(make_kernel, fake_llm, workspace) -> None:
    strategy = AskTheModel()
    kernel, conversation, _ = await start(make_kernel, "openai-chat", fake_llm, workspace, config=RESERVE, plugins=strategy_plugin(strategy))
    fake_llm.reply("one")
    first = await conversation.send(KEY, "first: " + BIG)
    assert first.notices == () and len(fake_llm.requests) == 1
    assert rough_tokens(fake_llm.requests[0].body) + 6_000 > LIMIT  # the next message would not fit

    fake_llm.reply("The user sent a long first text; the assistant said one.")
    fake_llm.reply("two")
    second = await conversation.send(KEY, "second: " + BIG)

    assert second.text == "two"
    summary_call, sent = fake_llm.requests[1:]
    assert summary_call.tools == [] and summary_call.system == AskTheModel.SYSTEM  # one call, no tools
    assert "first: lorem" in summary_call.messages[-1]["content"]
    assert rough_tokens(sent.body) <= LIMIT  # what the provider got fits
    [entry] = compactions(kernel)
    summary = render_summary("The user sent a long first text; the assistant said one.", entry["id"])
    assert wire_history(sent) == [user(summary), user("second: " + BIG)]
    assert entry["reason"] == "threshold" and entry["method"] == "summary" and entry["strategy"] == "ask-model"
    assert entry["first_kept_id"] == entry_of(kernel, "second: " + BIG)["id"]
    assert strategy.requests[0].reason == "threshold" and strategy.requests[0].context_window == WINDOW
    assert second.notices == (f"Compacted the conversation: {entry['tokens_before']:,} -> {entry['tokens_after']:,} tokens (summary).",)
    # the summary call's tokens are the session's too
    assert kernel.sessions.get(KEY).usage.prompt_tokens == sum(rough_tokens(r.body) for r in fake_llm.requests)

    fake_llm.reply("three")
    await conversation.send(KEY, "third")  # the next turn starts from the compaction
    assert wire_history(fake_llm.requests[-1]) == [user(summary), user("second: " + BIG), said("two"), user("third")]
    assert len(compactions(kernel)) == 1


async def test_an_overflow_is_compacted_with_the_model_and_the_request_retried_once(make_kernel, fake_llm, workspace) -> None:
    strategy = AskTheModel()
    kernel, conversation, _ = await start(make_kernel, "openai-chat", fake_llm, workspace, plugins=strategy_plugin(strategy))
    fake_llm.reply("Cats are great.")
    await conversation.send(KEY, "tell me about cats")
    fake_llm.fail("context_length")
    fake_llm.reply("We talked about cats.")
    fake_llm.reply("Dogs too.")

    turn = await conversation.send(KEY, "and dogs?")

    assert turn.text == "Dogs too." and len(fake_llm.requests) == 4
    [entry] = compactions(kernel)
    assert (entry["reason"], entry["summary"], entry["first_kept_id"]) == ("overflow", "We talked about cats.", entry_of(kernel, "and dogs?")["id"])
    assert wire_history(fake_llm.requests[3]) == [user(render_summary("We talked about cats.", entry["id"])), user("and dogs?")]
    assert turn.notices and turn.notices[0].startswith("Compacted the conversation: ")


FAILURES = {
    **{behaviour: (lambda b=behaviour: Misbehaving(b)) for behaviour in Misbehaving.BEHAVIOURS},
    "the summary call fails": AskTheModel,
}


@pytest.mark.parametrize("failure", FAILURES)
@pytest.mark.parametrize("reason", ["threshold", "overflow", "manual"])
async def test_a_failed_compaction_stores_nothing_and_the_session_goes_on(make_kernel, fake_llm, workspace, failure, reason) -> None:
    strategy = FAILURES[failure]()
    config = RESERVE if reason == "threshold" else ""
    kernel, conversation, _ = await start(
        make_kernel, "openai-chat", fake_llm, workspace, config=config, plugins=strategy_plugin(strategy), caller_sleep=no_sleep
    )
    fake_llm.reply("one")
    await conversation.send(KEY, "first: " + BIG)
    if reason == "overflow":
        fake_llm.fail("context_length")
    if failure == "the summary call fails":
        fake_llm.fail("server_error", times=4)  # the first try and every retry

    if reason == "manual":
        reply = await compact_session(conversation, KEY, "keep the numbers")
        assert reply == "The conversation could not be compacted (the log says why); it goes on unchanged."
    elif reason == "overflow":
        with pytest.raises(ProviderError) as info:  # the short overflow message, as without a strategy
            await conversation.send(KEY, "second")
        assert info.value.kind == "context_overflow" and "context window" in info.value.user_message
    else:
        fake_llm.reply("two")
        turn = await conversation.send(KEY, "second: " + BIG)  # sent uncompacted: the provider decides
        assert turn.text == "two" and turn.notices == ()
        assert wire_history(fake_llm.requests[-1])[0] == user("first: " + BIG)

    assert compactions(kernel) == []
    retried = reason == "threshold" and failure == "the summary call fails"
    if retried:  # the next request is still too large: compacting is tried again, and works
        fake_llm.reply("A summary at last.")
    fake_llm.reply("still here")
    assert (await conversation.send(KEY, "are you there?")).text == "still here"
    assert len(compactions(kernel)) == (1 if retried else 0)


async def test_a_manual_compaction_passes_the_instructions_and_replies_instead_of_a_notice(make_kernel, fake_llm, workspace) -> None:
    strategy = AskTheModel()
    kernel, conversation, _ = await start(make_kernel, "openai-chat", fake_llm, workspace, plugins=strategy_plugin(strategy))
    assert await compact_session(conversation, KEY) == "Nothing to compact yet: the conversation is still short."
    fake_llm.reply("noted")
    await conversation.send(KEY, "decision: ship on Friday. " + BIG)
    fake_llm.reply("We decided to ship on Friday.")

    reply = await compact_session(conversation, KEY, "focus on decisions")

    [entry] = compactions(kernel)
    assert reply == f"Compacted the conversation: {entry['tokens_before']:,} -> {entry['tokens_after']:,} tokens (summary)."
    assert (strategy.requests[0].reason, strategy.requests[0].instructions) == ("manual", "focus on decisions")
    assert fake_llm.requests[-1].messages[-1]["content"].startswith("Focus: focus on decisions\n")
    assert entry["reason"] == "manual" and entry["summary"] == "We decided to ship on Friday."

    # the previous summary reaches the next compaction apart from the messages
    fake_llm.reply("ok")
    await conversation.send(KEY, "and the budget is 10k. " + BIG)
    fake_llm.reply("Ship Friday, budget 10k.")
    await compact_session(conversation, KEY)
    second = strategy.requests[1]
    assert second.previous_summary == "We decided to ship on Friday."
    assert [m.text for m in second.messages] == ["noted", "and the budget is 10k. " + BIG, "ok"]
