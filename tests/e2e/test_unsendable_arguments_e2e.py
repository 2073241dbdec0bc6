"""Tool arguments JSON cannot carry (NaN, Infinity, a lone surrogate) cost the model one
error result, never the turn or the session.

Python's ``json`` accepts ``NaN`` and ``"\\ud800"``; the SDKs refuse to send such values
again and UTF-8 cannot store a lone surrogate, so a call holding one used to fail its own
turn and every later request of the session. Every way a reply reaches the loop is
covered (three wire APIs through their official SDKs, prompt-based tool calling), and so is
a session whose transcript already holds such a call, written by an older clawbot.
"""

from __future__ import annotations

import json

import pytest
from clawbot import Message, Role, TextBlock, ToolCallBlock
from clawbot.providerkit import NOT_FINITE, NOT_TEXT
from clawbot.sessions.codec import make_data_converter
from clawbot.sessions.transcript import load_transcript

from .e2etools import KEY, KINDS, start, transcript_path
from .test_deep_arguments_e2e import PATHS, script_call, start_path

# (the arguments as the model writes them, what the model is told)
UNSENDABLE = {
    "NaN": ('{"n": NaN}', NOT_FINITE),
    "Infinity": ('{"n": Infinity}', NOT_FINITE),
    "-Infinity nested": ('{"v": [1, {"n": -Infinity}]}', NOT_FINITE),
    "a number too large for a float": ('{"n": 1e999}', NOT_FINITE),
    "a lone high surrogate": ('{"n": "\\ud800"}', NOT_TEXT),
    "a lone low surrogate inside text": ('{"n": "ab\\udfffcd"}', NOT_TEXT),
    "a lone surrogate in a key": ('{"\\udbff": 1}', NOT_TEXT),
    "a lone surrogate deep inside": ('{"v": [[{"w": ["x", "\\ud83d"]}]]}', NOT_TEXT),
}


@pytest.mark.parametrize("arguments", UNSENDABLE, ids=list(UNSENDABLE))
@pytest.mark.parametrize("path", PATHS)
async def test_arguments_json_cannot_carry_become_an_error_result_and_the_session_goes_on(make_kernel, fake_llm, workspace, path, arguments) -> None:
    text, problem = UNSENDABLE[arguments]
    ran: list[dict] = []
    conversation = await start_path(path, make_kernel, fake_llm, workspace, ran)
    script_call(path, fake_llm, text)
    fake_llm.reply("All done.")

    turn = await conversation.send(KEY, "probe it")

    assert (turn.text, turn.tool_calls, ran) == ("All done.", 1, [])
    told = f"The arguments for probe {problem}"
    assert json.dumps(told)[1:-1] in json.dumps(fake_llm.requests[1].body)
    loaded = load_transcript(transcript_path(conversation.kernel), make_data_converter())
    assert loaded.warnings == []
    result = next(m for m in loaded.messages() if m.role == Role.TOOL_RESULT)
    assert result.is_error and result.text.startswith(told)
    fake_llm.reply("Still here.")
    assert (await conversation.send(KEY, "and now?")).text == "Still here."


def _older_history() -> list[Message]:
    """What an older clawbot could leave in a transcript: a call with NaN and Infinity in its
    decoded arguments (it kept them), and text with lone surrogates (from a channel or a tool)."""
    return [
        Message.user("count \ud800 things"),
        Message(Role.ASSISTANT, (TextBlock("Counting \udc00."), ToolCallBlock("c1", "count", {"n": float("nan"), "m": [float("-inf")]}))),
        Message(Role.TOOL_RESULT, (TextBlock("counted \udbff"),), tool_call_id="c1", tool_name="count"),
        Message.assistant("There are \ud83d many."),
    ]


@pytest.mark.parametrize("kind", KINDS)
async def test_a_session_already_holding_unsendable_values_still_answers(make_kernel, fake_llm, workspace, kind) -> None:
    kernel, conversation, _ = await start(make_kernel, kind, fake_llm, workspace)
    session = kernel.sessions.open(KEY)
    for message in _older_history():
        session.transcript.append_message(message)
    assert load_transcript(transcript_path(kernel), make_data_converter()).warnings == []
    fake_llm.reply("Still here.")

    assert (await conversation.send(KEY, "and now?")).text == "Still here."

    sent = json.dumps(fake_llm.requests[0].body)
    assert "\\ufffd" in sent  # each lone surrogate went out as U+FFFD
    assert '"c1"' in sent and "counted" in sent  # the old call and its result were sent
    fake_llm.reply("Again.")
    assert (await conversation.send(KEY, "once more")).text == "Again."
