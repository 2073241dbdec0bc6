"""Reply tags, MEDIA lines, HEARTBEAT_OK and silent tokens in the model's reply: read and
removed before it goes out, turned into native replies and workspace-confined attachments.

Real gateway and fake channel; the responder returns the model's reply as written.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest
from clawbot.gateway.reply_protocol import parse_reply
from clawbot.gateway.runner import Gateway
from clawbot.testing import FakeChannel
from clawbot.types import ChannelCapabilities

MEDIA = ChannelCapabilities(media=True)

# reply as written: (text sent, reply_to: "current" | id | None, audio_as_voice, media refs, delivered)
PARSED = {
    "plain": ("Hello there", ("Hello there", None, False, (), True)),
    "reply to current": ("[[reply_to_current]] Hello", ("Hello", "current", False, (), True)),
    "reply to an id, spaced": ("[[ reply_to: 42 ]]Hi", ("Hi", "42", False, (), True)),
    "tag mid-text": ("Sure [[reply_to_current]] thing", ("Sure thing", "current", False, (), True)),
    "media line removed": ("Here:\n\nMEDIA: out/chart.png\n\nEnjoy", ("Here:\n\nEnjoy", None, False, ("out/chart.png",), True)),
    "media only": ("MEDIA:a.png", ("", None, False, ("a.png",), True)),
    "voice": ("[[audio_as_voice]]\nMEDIA:note.ogg", ("", None, True, ("note.ogg",), True)),
    "media in prose is prose": ("The file: MEDIA:x.png", ("The file: MEDIA:x.png", None, False, (), True)),
    "fenced directives are quoted": ("```\nMEDIA:x.png\n[[reply_to_current]]\n```", ("```\nMEDIA:x.png\n[[reply_to_current]]\n```", None, False, (), True)),
    "heartbeat alone": ("HEARTBEAT_OK", ("", None, False, (), False)),
    "heartbeat in bold with a short note": ("**HEARTBEAT_OK** all quiet", ("all quiet", None, False, (), False)),
    "heartbeat at the end of a short note": ("Nothing new. HEARTBEAT_OK", ("Nothing new.", None, False, (), False)),
    "heartbeat with a long report": ("HEARTBEAT_OK\n" + "x" * 301, ("x" * 301, None, False, (), True)),
    "heartbeat glued to a word": ("Fine.HEARTBEAT_OK", ("Fine.", None, False, (), False)),
    "a word like heartbeat": ("HEARTBEAT is not it", ("HEARTBEAT is not it", None, False, (), True)),
    "silent": ("NO_REPLY", ("NO_REPLY", None, False, (), False)),
    "silent after a tag": ("[[reply_to_current]] __SILENT__", ("__SILENT__", "current", False, (), False)),
    "silent mentioned in a real answer": ("Say NO_REPLY to stay quiet", ("Say NO_REPLY to stay quiet", None, False, (), True)),
    "windows line ends": ("Hi\r\nMEDIA:a.png\r\n", ("Hi", None, False, ("a.png",), True)),
}


@pytest.mark.parametrize("case", PARSED)
def test_directives_are_read_out_of_the_reply(case) -> None:
    raw, (text, reply_to, voice, media, delivered) = PARSED[case]
    parsed = parse_reply(raw)
    assert parsed.text == text
    assert ("current" if parsed.reply_to_current and parsed.reply_to is None else parsed.reply_to) == reply_to
    assert (parsed.audio_as_voice, parsed.media, parsed.delivered) == (voice, media, delivered)


async def _answer(make_kernel, workspace: Path, reply: str, channel: FakeChannel | None = None) -> FakeChannel:
    channel = channel or FakeChannel(capabilities=MEDIA)

    async def respond(message, session_key):
        return reply

    kernel = await make_kernel(config=f'[agents.defaults]\nworkspace = "{workspace}"\n')
    gateway = Gateway(kernel, respond, "main")
    task = asyncio.create_task(gateway.run([channel]))
    await channel.inject("hi")
    gateway.stop()
    await task
    return channel


async def test_reply_tags_become_native_replies(make_kernel, workspace) -> None:
    channel = await _answer(make_kernel, workspace, "[[reply_to:m-3]] About that earlier message")
    (sent,) = channel.sent
    assert (sent.text, sent.reply_to_id) == ("About that earlier message", "m-3")


@pytest.mark.parametrize("reply", ["HEARTBEAT_OK", "NO_REPLY", "[[silent]]", "HEARTBEAT_OK nothing needs attention", ""])
async def test_acknowledgements_and_silent_replies_reach_no_chat(make_kernel, workspace, reply) -> None:
    channel = await _answer(make_kernel, workspace, reply)
    assert channel.sent == []


async def test_a_workspace_file_is_attached_with_the_last_text(make_kernel, workspace) -> None:
    (workspace / "out").mkdir()
    (workspace / "out" / "chart.png").write_bytes(b"png")
    channel = await _answer(make_kernel, workspace, "[[audio_as_voice]]Here is the chart.\nMEDIA:out/chart.png\nMEDIA: https://example.com/a.png")
    (sent,) = channel.sent
    assert sent.text == "Here is the chart."
    copy, link = sent.media
    assert link == "https://example.com/a.png" and Path(copy).read_bytes() == b"png"
    assert not Path(copy).is_relative_to(workspace) and os.stat(copy).st_mode & 0o777 == 0o600  # a private copy
    assert sent.audio_as_voice and "MEDIA" not in sent.text


async def test_the_file_sent_is_the_one_checked_even_if_swapped_for_a_link_afterwards(make_kernel, workspace, tmp_path) -> None:
    """The channel gets a copy made through the checked descriptor: replacing the workspace
    file by a link to a secret before the channel reads it changes nothing it sends."""
    secret = tmp_path / "secret.txt"
    secret.write_text("private key")
    (workspace / "report.txt").write_text("the report")
    channel = await _answer(make_kernel, workspace, "Here.\nMEDIA:report.txt")
    (workspace / "report.txt").unlink()
    (workspace / "report.txt").symlink_to(secret)
    (copy,) = channel.sent[0].media
    assert Path(copy).read_text() == "the report"


def _refusals(workspace: Path, outside: Path) -> dict[str, tuple[str, str]]:
    secret = outside / "secret.txt"
    secret.write_text("key")
    (workspace / "link.txt").symlink_to(secret)
    (workspace / "sub").symlink_to(outside, target_is_directory=True)
    os.link(secret, workspace / "hard.txt")
    (workspace / "dir").mkdir()
    return {
        "an absolute path outside": (str(secret), "leads outside the workspace"),
        "climbing out": ("../outside/secret.txt", "leads outside the workspace"),
        "a symbolic link out": ("link.txt", "leads outside the workspace"),
        "a folder that is a link out": ("sub/secret.txt", "leads outside the workspace"),
        "a hard link": ("hard.txt", "hard links"),
        "a folder": ("dir", "is not a regular file (a folder)"),
        "missing": ("nope.png", "no such file"),
        "a file: link": ("file:///etc/passwd", "only http(s) links"),
        "a javascript: link": ("javascript:alert(1)", "no such file"),
        "a NUL in the name": ("ok.txt\x00x", "control characters"),
        "an escape in the name": ("ok\x1b[2J.txt", "control characters"),
    }


async def test_a_media_path_outside_the_workspace_becomes_a_short_note(make_kernel, tmp_path, workspace) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    cases = _refusals(workspace, outside)
    for name, (ref, why) in cases.items():
        channel = await _answer(make_kernel, workspace, f"Look\nMEDIA:{ref}")
        (sent,) = channel.sent
        assert sent.media == (), name
        assert sent.text.startswith("Look\n(") and why in sent.text and "was not attached" in sent.text, (name, sent.text)


async def test_a_channel_without_media_gets_links_as_text_and_a_note_for_files(make_kernel, workspace) -> None:
    (workspace / "a.png").write_bytes(b"png")
    channel = await _answer(make_kernel, workspace, "See\nMEDIA:a.png\nMEDIA:https://example.com/b.png", FakeChannel())
    (sent,) = channel.sent
    assert sent.media == ()
    assert sent.text == "See\n(a.png was not attached: this chat cannot receive files)\nhttps://example.com/b.png"


async def test_the_transcript_keeps_the_reply_as_the_model_wrote_it(make_kernel, workspace) -> None:
    from .chatkit import open_chat
    from .test_live_activity import StreamingProvider

    channel = FakeChannel(capabilities=MEDIA)
    chat = await open_chat(make_kernel, channel, StreamingProvider("[[reply_to_current]] Done.\nMEDIA:nope.png"))
    await channel.inject("hi")
    await chat.close()
    assert channel.sent[0].text == "Done.\n(nope.png was not attached: there is no such file in the workspace)"
    transcripts = list(Path(os.environ["CLAWBOT_HOME"]).rglob("*.jsonl"))
    assert any("[[reply_to_current]] Done.\\nMEDIA:nope.png" in p.read_text() for p in transcripts)
