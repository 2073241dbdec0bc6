"""Strategy ``summary`` with a real model call: the real openai SDK talks to the fake LLM
server, so what the model was asked is read off the requests the server recorded."""

from __future__ import annotations

import re

import pytest
from clawbot.tokens import estimate_tokens
from clawbot.types import CompactionRequest
from clawbot_compaction.history import history_tokens
from clawbot_compaction.kept import TITLE
from clawbot_compaction.prompts import SYSTEM
from clawbot_compaction.summary import SummaryStrategy

from .history_kit import call, result, said, user
from .model_kit import summarizer

OLD = [
    user("Our config lives in /srv/app/config.yaml and the order is ORD-48213."),
    said("Noted. I will check it on 2026-01-15."),
    call("exec", "c1", command="grep -n max_connections /srv/app/config.yaml"),
    result("exec", "c1", "12: max_connections: 20\n" + "filler line\n" * 2_000 + "last: 512 MB"),
    said("The pool allows 20 connections."),
]
RECENT = [user("Now raise it to 50."), said("Raised.")]
HISTORY = (*OLD, *RECENT)
PREVIOUS = "## Facts\n- The deploy host is db-host-7 (see https://wiki.example.com/db)."


def request(client, messages=HISTORY, **fields) -> CompactionRequest:
    fields.setdefault("keep_recent_tokens", 12)  # the two RECENT messages
    return CompactionRequest(tuple(messages), "gpt-test", summarize=summarizer(client) if client else None, **fields)


def prompt_of(recorded) -> str:
    (user_message,) = [m for m in recorded.messages if m["role"] == "user"]
    return user_message["content"]


async def test_the_model_summarises_the_old_part_and_dropped_identifiers_are_appended(fake_llm_server, client) -> None:
    fake = fake_llm_server
    fake.reply("## Current task\nRaise the pool size in /srv/app/config.yaml.\n## Facts\n- max_connections was 20 (2026-01-15).")

    done = await SummaryStrategy().compact(request(client, previous_summary=PREVIOUS, instructions="focus on decisions and open questions"))

    (asked,) = fake.requests
    assert asked.system == SYSTEM
    prompt = prompt_of(asked)
    assert re.search(r"<<<BEGIN UNTRUSTED id=(\w+): previous summary;[^\n]*\n" + re.escape(PREVIOUS) + r"\n<<<END UNTRUSTED id=\1>>>", prompt)
    assert "The user asked this summary to: focus on decisions and open questions" in prompt
    assert "Keep every identifier exactly as written" in prompt
    assert "[User (owner)]\nOur config lives in /srv/app/config.yaml and the order is ORD-48213." in prompt
    assert '[tool call: exec] {"command": "grep -n max_connections /srv/app/config.yaml"}' in prompt
    assert (
        re.search(r"\[tool result: exec\]\n<<<BEGIN UNTRUSTED id=\w+: [^\n]*\n12: max_connections: 20", prompt)
        and "last: 512 MB" in prompt
        and "characters left out" in prompt
    )
    assert "raise it to 50" not in prompt  # the recent part stays verbatim, unsummarised

    assert (done.method, done.first_kept_index) == ("summary", len(OLD))
    model_text, appended = done.summary.split("\n\n" + TITLE + "\n")
    assert model_text.startswith("## Current task\nRaise the pool size")
    # the model left them out; they are kept anyway, each under who or what wrote it
    assert appended.split("\n- `")[0] == "From the previous summary:"
    groups = dict(re.findall(r"^(From [^\n]*:)\n((?:- [^\n]*\n?)+)", appended, re.MULTILINE))
    assert set(groups) == {"From the previous summary:", "From User (owner):", 'From a tool result of "exec":'}
    for dropped, source in (
        ("db-host-7", "From the previous summary:"),
        ("https://wiki.example.com/db", "From the previous summary:"),
        ("ORD-48213", "From User (owner):"),
        ("512 MB", 'From a tool result of "exec":'),
    ):
        assert f"- `{dropped}`" in groups[source].splitlines()
    listed = [line for line in appended.splitlines() if line.startswith("- ")]
    for kept in ("/srv/app/config.yaml", "2026-01-15", "max_connections"):
        assert f"- `{kept}`" not in listed
    assert all(line.startswith("- `") and line.endswith("`") for line in listed)
    assert done.detail == f"{len(OLD)} messages summarised; {len(listed)} identifiers the model left out were appended"
    assert done.tokens_before == history_tokens(HISTORY, PREVIOUS)
    assert done.tokens_after == history_tokens(RECENT, done.summary) < done.tokens_before


async def test_a_model_that_fails_twice_leaves_a_trim_that_says_why(fake_llm_server, client) -> None:
    fake_llm_server.fail("server_error", times=2)

    done = await SummaryStrategy().compact(request(client))

    assert len(fake_llm_server.requests) == 2
    assert (done.method, done.first_kept_index) == ("trim", len(OLD))
    assert done.detail == "the model failed twice (server error); trimmed instead"
    assert done.summary.startswith("Earlier conversation, trimmed without a model: 5 messages")
    assert "/srv/app/config.yaml" in done.summary and "ORD-48213" in done.summary


@pytest.mark.parametrize(
    ("first", "second", "method", "detail"),
    [
        ("", "## Facts\n- ORD-48213 at /srv/app/config.yaml", "summary", "5 messages summarised"),
        ("   \n", "", "trim", "the model failed twice (an empty reply); trimmed instead"),
        ("fault", "", "trim", "the model failed twice (server error, then an empty reply); trimmed instead"),
        ("fault", "## Facts\n- done", "summary", None),
    ],
    ids=["empty-then-good", "empty-twice", "error-then-empty", "error-then-good"],
)
async def test_an_empty_or_failed_answer_is_asked_once_more(fake_llm_server, client, first, second, method, detail) -> None:
    if first == "fault":
        fake_llm_server.fail("server_error")
    else:
        fake_llm_server.reply(first)
    fake_llm_server.reply(second)

    done = await SummaryStrategy().compact(request(client))

    assert len(fake_llm_server.requests) == 2
    assert done.method == method and done.summary.strip()
    if detail is not None:
        assert done.detail.startswith(detail)
    if method == "summary":
        assert done.summary.startswith(second)


async def test_an_old_part_too_large_for_one_call_is_summarised_in_parts(fake_llm_server, client) -> None:
    window = 8_000  # tokens; one call may read half of it
    turns = [m for i in range(60) for m in (user(f"Step {i}: store /data/file_{i}.csv. " + "words " * 300), said(f"Stored file_{i}."))]
    fake_llm_server.queue(*[f"## Facts\n- part {n} summary" for n in range(1, 30)])

    done = await SummaryStrategy().compact(request(client, turns + [user("and now?")], context_window=window, keep_recent_tokens=3))

    asked = fake_llm_server.requests
    assert len(asked) >= 4 and done.detail.startswith(f"{len(turns)} messages summarised in {len(asked)} parts")
    sizes = [estimate_tokens(len(r.system) + len(prompt_of(r))) for r in asked]
    assert max(sizes) <= window // 2, sizes
    for number, recorded in enumerate(asked[1:], start=1):
        assert re.search(
            rf"<<<BEGIN UNTRUSTED id=(\w+): previous summary;[^\n]*\n## Facts\n- part {number} summary\n<<<END UNTRUSTED id=\1>>>", prompt_of(recorded)
        )  # each part carries the last
        assert f"(part {number + 1} of {len(asked)}, oldest first)" in prompt_of(recorded)
    assert done.summary.startswith(f"## Facts\n- part {len(asked)} summary")
    assert "- `/data/file_0.csv`" in done.summary and "- `/data/file_59.csv`" in done.summary  # no identifier lost


async def test_without_a_model_the_summary_strategy_trims_and_says_so() -> None:
    done = await SummaryStrategy().compact(request(None))
    assert (done.method, done.first_kept_index) == ("trim", len(OLD))
    assert done.detail == "no model was available to write a summary; trimmed instead"
    assert "ORD-48213" in done.summary
