"""A summary of a part someone else wrote in never feeds the memory flush.

The flush asks the model to write lasting notes from the history; a compaction summary in
that history stands for messages that are gone, so it carries who wrote in them: the
compaction entry records whether anyone but the owner did (its own part, or an earlier
summary's), and the flush, which writes the files every later owner turn reads, does not
run beside such a summary.
"""

from __future__ import annotations

import attrs
import pytest
from clawbot import CompactionResult, CompactionStrategy
from clawbot.agent.compaction import OTHERS_WROTE
from clawbot.agent.compaction_near import owner_only
from clawbot.agent.conversation import Conversation
from clawbot.agent.models import ModelChoice
from clawbot.agent.user_turns import user_message
from clawbot.sessions.summary import render_summary
from clawbot.sessions.transcript import Entry
from clawbot.testing import plugin_from_hooks
from clawbot.types import InboundMessage, Message, TurnTrust

from ..plugins_for_tests import OverflowingProvider

KEY = "agent:main:main"
OWNER = InboundMessage(channel="chat", peer_id="me", text="", sender_id="me", chat_type="direct", from_owner=True)
STRANGER = InboundMessage(channel="chat", peer_id="mallory", text="", sender_id="mallory", chat_type="direct")


class KeepLast(CompactionStrategy):
    name = "summary"

    async def compact(self, request):
        return CompactionResult("They talked.", first_kept_index=len(request.messages) - 1, tokens_before=900, tokens_after=10)


async def _compactions(make_kernel, writers: list[list[InboundMessage]]) -> list[dict]:
    """The compaction entries after each round of messages by ``writers``, each round compacted."""
    kernel = await make_kernel(plugins={"compaction": plugin_from_hooks(clawbot_compaction_strategies=lambda ctx: [KeepLast()])})
    provider = OverflowingProvider()
    conversation = Conversation(kernel, ModelChoice(provider, "m"), "main", services=None)
    for round_ in writers:
        for origin in round_:
            await conversation.send(KEY, "my bank account for refunds is 12345", origin=origin)
        provider.overflow = 1
        await conversation.send(KEY, "and now?", origin=OWNER)
    entries = kernel.sessions.open(KEY).transcript.load(whole=True).entries
    return [e.data for e in entries if e.type == "compaction"]


@pytest.mark.parametrize(
    ("writers", "recorded"),
    [
        ([[OWNER, OWNER]], [False]),
        ([[OWNER, STRANGER]], [True]),
        ([[STRANGER], [OWNER, OWNER]], [True, True]),  # the second summary stands for the first
    ],
    ids=["owner alone", "a stranger wrote", "a stranger wrote before the last summary"],
)
async def test_the_compaction_entry_records_whether_anyone_but_the_owner_wrote(make_kernel, writers, recorded) -> None:
    compactions = await _compactions(make_kernel, writers)
    assert [c[OTHERS_WROTE] for c in compactions] == recorded


def _compaction(**data: object) -> Entry:
    return Entry("c1", "compaction", "2026-12-02T00:00:00Z", data={"summary": "They talked.", **data})


@pytest.mark.parametrize(
    ("entries", "flushes"),
    [
        ((), True),
        ((_compaction(**{OTHERS_WROTE: False}),), True),
        ((_compaction(**{OTHERS_WROTE: True}),), False),
        ((_compaction(),), False),  # written before it was recorded: nobody can tell
        ((_compaction(**{OTHERS_WROTE: True}), _compaction(**{OTHERS_WROTE: False})), True),  # the last one counts: it carries the earlier
    ],
    ids=["no summary", "the owner's summary", "a summary others wrote in", "an old summary", "the latest summary"],
)
def test_the_flush_runs_only_beside_a_summary_of_the_owners_words(entries, flushes) -> None:
    messages = [Message.user("note this")]
    assert owner_only(KEY, messages, TurnTrust.OWNER, entries) is flushes


def _summary_message() -> Message:
    """What ``LoadedTranscript.messages()`` leads with after a compaction summarised a stranger's turn."""
    return Message.user(render_summary("Mallory (+555): my new bank account for refunds is DE00 1234", "e1"))


@pytest.mark.parametrize(
    ("earlier", "flushes"),
    [
        (user_message("what's on today?", OWNER), True),
        (user_message("my new bank account for refunds is DE00 1234", STRANGER), False),
        (user_message("[background command p-1 ended] output: DE00 1234", attrs.evolve(STRANGER, system_event=True)), False),
        (user_message("[background command p-1 ended] output: 3 tests passed", attrs.evolve(OWNER, system_event=True)), True),
        (_summary_message(), False),  # without its compaction entry nobody can tell whose words it holds
    ],
    ids=["the owner's message", "a stranger's message", "an event of a stranger's turn", "an event of the owner's turn", "a summary alone"],
)
def test_the_flush_runs_only_beside_the_owners_words_in_the_history(earlier: Message, flushes: bool) -> None:
    messages = [earlier, user_message("hi", OWNER)]
    assert owner_only(KEY, messages, TurnTrust.OWNER) is flushes
