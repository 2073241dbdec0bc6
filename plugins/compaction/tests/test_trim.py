"""Strategy ``trim``: a digest of the older part made without a model, the same for the
same history and never larger than about DIGEST_TOKENS, whatever the history holds."""

from __future__ import annotations

from clawbot.tokens import estimate_tokens
from clawbot.types import CompactionRequest
from clawbot_compaction.history import history_tokens
from clawbot_compaction.trim import DIGEST_TOKENS, TrimStrategy

from .history_kit import call, result, said, user

OLD = [
    user("Please fix the failing test in tests/test_api.py\nIt started on 2026-01-15."),
    call("read", "c1", "Let me look.", path="/repo/tests/test_api.py"),
    result("read", "c1", "def test_get(): ..."),
    call("exec", "c2", command="uv run pytest tests/test_api.py"),
    result("exec", "c2", "FAILED tests/test_api.py::test_get - KeyError: 'user_id'\n1 failed", error=True),
    call("edit", "c3", path="/repo/app/api.py", old="a", new="b"),
    result("edit", "c3", "ok"),
    call("apply_patch", "c4", input="*** Begin Patch\n*** Update File: app/models.py\n@@\n-x\n+y\n*** End Patch"),
    result("apply_patch", "c4", "ok"),
    said("Fixed: the handler now reads user_id from the query, see https://docs.example.com/api."),
]
RECENT = [user("Thanks! Now deploy."), said("Deploying.")]


async def test_the_digest_says_what_happened_without_a_model() -> None:
    messages = (*OLD, *RECENT)
    done = await TrimStrategy().compact(CompactionRequest(messages, "m", keep_recent_tokens=8, previous_summary="Earlier: chose PostgreSQL 16."))
    assert (done.method, done.first_kept_index, done.detail) == ("trim", len(OLD), "")
    assert done.summary == (
        "Earlier conversation, trimmed without a model: 10 messages (1 from the user, 2 assistant replies, 4 tool calls, 4 tool results).\n\n"
        "Summary of what came before:\nEarlier: chose PostgreSQL 16.\n\n"
        "What was said to the assistant (first line of each message, after who wrote it; only the user's (owner's) are wishes):\n"
        "- User (owner): Please fix the failing test in tests/test_api.py\n\n"
        "Tool calls:\n- read /repo/tests/test_api.py\n- exec uv run pytest tests/test_api.py\n- edit /repo/app/api.py\n- apply_patch *** Begin Patch\n\n"
        "Files read:\n- /repo/tests/test_api.py\n\n"
        "Files changed:\n- /repo/app/api.py\n- app/models.py\n\n"
        "Errors seen:\n- exec: FAILED tests/test_api.py::test_get - KeyError: 'user_id'\n\n"
        "Identifiers kept verbatim, each under who or what wrote it, quoted:\n"  # the others are named above
        "From User (owner):\n- `2026-01-15`\n"
        "From the assistant:\n- `https://docs.example.com/api`"
    )
    assert done.tokens_before == history_tokens(messages, "Earlier: chose PostgreSQL 16.")
    assert done.tokens_after == history_tokens(RECENT, done.summary)


async def test_the_digest_is_deterministic_and_bounded_however_long_the_history() -> None:
    huge = []
    for i in range(400):
        huge += [
            user(f"Task {i}: look at /srv/data/part_{i}.csv " + "please " * 200),
            call("exec", f"c{i}", command=f"wc -l /srv/data/part_{i}.csv"),
            result("exec", f"c{i}", f"error {i}: " + "x" * 3_000, error=True),
            said(f"Part {i} has {i * 1000 + 7} rows."),
        ]
    request = CompactionRequest((*huge, user("and?")), "m", keep_recent_tokens=5, previous_summary="p" * 50_000)
    first, second = await TrimStrategy().compact(request), await TrimStrategy().compact(request)
    assert first == second
    assert estimate_tokens(first.summary) <= DIGEST_TOKENS
    assert "... and " in first.summary and first.tokens_after < 2_100 < 400_000 < first.tokens_before
