"""A turn on a compacted session reads only what follows its last compaction.

Long-lived sessions grow transcripts of hundreds of megabytes; reading all of it made every
turn take seconds and a gigabyte (bench/transcript.py). Here the part before the compaction
is overwritten with megabytes of bytes that are no transcript at all: a turn that read them
would warn about every line. A compaction entry that no longer reads as one (the file was
edited behind clawbot's back) is not trusted: the whole file is read as before.
"""

from __future__ import annotations

import logging

import pytest
from clawbot import CompactionResult, CompactionStrategy, Role
from clawbot.agent.conversation import Conversation
from clawbot.agent.models import ModelChoice
from clawbot.sessions.scan import CHUNK
from clawbot.testing import plugin_from_hooks

from ..plugins_for_tests import OverflowingProvider

KEY = "agent:main:main"


class KeepLast(CompactionStrategy):
    name = "keep-last"

    async def compact(self, request):
        return CompactionResult("We talked about the trip.", first_kept_index=len(request.messages) - 1, tokens_before=900, tokens_after=100)


async def _compacted_session(make_kernel):
    kernel = await make_kernel(plugins={"compaction": plugin_from_hooks(clawbot_compaction_strategies=lambda ctx: [KeepLast()])})
    provider = OverflowingProvider()
    conversation = Conversation(kernel, ModelChoice(provider, "m"), "main", services=None)
    for text in ("first", "second", "third"):
        await conversation.send(KEY, text)
    provider.overflow = 1
    await conversation.send(KEY, "after the compaction")
    path = kernel.sessions.path_of(kernel.sessions.get(KEY), "main")
    return conversation, provider, path


def _split(data: bytes) -> tuple[bytes, bytes, bytes]:
    """(header line, the lines before the compaction entry, the compaction entry and after)."""
    header_end = data.index(b"\n") + 1
    compaction = data.index(b'\n{"type": "compaction"') + 1
    return data[:header_end], data[header_end:compaction], data[compaction:]


async def test_a_turn_after_a_compaction_does_not_read_the_part_before_it(make_kernel, caplog) -> None:
    conversation, provider, path = await _compacted_session(make_kernel)
    header, before, after = _split(path.read_bytes())
    assert before.count(b'"role": "user"') == 4  # the last one is also kept after the compaction
    garbage = b"\xff\xfe not a transcript line {\n" * 200_000  # ~6 MB, each line would be reported if read
    path.write_bytes(header + garbage + after)

    caplog.set_level(logging.WARNING)
    result = await conversation.send(KEY, "and now?")

    assert result.text == "reply 6"
    sent = provider.requests[-1].messages
    assert "We talked about the trip." in sent[0].text  # the summary, then what was kept and said since
    assert [m.text for m in sent[1:]] == ["after the compaction", "reply 5", "and now?"]
    assert [r.getMessage() for r in caplog.records if path.name in r.getMessage()] == []
    assert [r.getMessage() for r in caplog.records if path.name in r.getMessage()] == []


async def test_a_compaction_entry_that_no_longer_reads_as_one_means_the_whole_file_is_read(make_kernel, caplog) -> None:
    conversation, provider, path = await _compacted_session(make_kernel)
    header, before, after = _split(path.read_bytes())
    first_line, rest = after.split(b"\n", 1)
    path.write_bytes(header + before + first_line[:40] + b"\n" + rest)  # the entry cut short, as by an editor

    caplog.set_level(logging.WARNING)
    await conversation.send(KEY, "and now?")

    sent = provider.requests[-1].messages
    assert [m.text for m in sent if m.role == Role.USER][:3] == ["first", "second", "third"]  # no summary: all history
    warnings = [r.getMessage() for r in caplog.records if path.name in r.getMessage()]
    assert len(warnings) == 1 and "skipped corrupt line" in warnings[0]


async def test_the_last_of_several_compactions_is_the_one_used(make_kernel) -> None:
    conversation, provider, _ = await _compacted_session(make_kernel)
    provider.overflow = 1
    await conversation.send(KEY, "again too long")  # a second compaction
    await conversation.send(KEY, "and now?")
    sent = provider.requests[-1].messages
    assert [m.text for m in sent[1:]] == ["again too long", "reply 7", "and now?"]


# where the compaction line starts relative to the border of the last block the search reads:
# inside it, right at it, and with its first bytes in the block before
@pytest.mark.parametrize("shift", [-3, -1, 0, 1, 5, 21, 22, 23, 40])
async def test_a_compaction_line_across_the_search_blocks_is_found(make_kernel, caplog, shift) -> None:
    conversation, provider, path = await _compacted_session(make_kernel)
    header, _, after = _split(path.read_bytes())
    data = header + b"\xff not a transcript line {\n" * 100 + after  # reported if it were read
    line_start = data.index(b'\n{"type": "compaction"') + 1
    frame = b'{"type": "custom", "id": "padding0000", "kind": "note", "text": ""}\n'
    # pad the end so that the file's last CHUNK bytes begin `shift` bytes after the line's start
    width = line_start + shift + CHUNK - len(data) - len(frame)
    assert width > 0
    path.write_bytes(data + frame.replace(b'"text": ""', b'"text": "' + b"x" * width + b'"'))
    assert path.stat().st_size - CHUNK == line_start + shift

    caplog.set_level(logging.WARNING)
    await conversation.send(KEY, "and now?")

    sent = provider.requests[-1].messages
    assert "We talked about the trip." in sent[0].text
    assert [m.text for m in sent[1:]] == ["after the compaction", "reply 5", "and now?"]
    assert [r.getMessage() for r in caplog.records if path.name in r.getMessage()] == []
