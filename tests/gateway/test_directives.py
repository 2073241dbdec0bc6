"""Directives at the start of a message, and the setting commands they share their words with.

``/think high what is 17*23?`` runs that turn with thinking high and the model reads only
the question; a message of directives alone keeps them for the session (across a restart);
only the owner's inline directives are taken off, anyone else's stay text. Real kernel,
gateway and Anthropic provider on the fake LLM; only the chat network is the fake channel.
"""

from __future__ import annotations

import pytest
from clawbot.gateway.directives import Directive, split_directives
from clawbot.sessions.store import SessionStore

from ..e2e.e2etools import make_provider, providers_plugin
from .chatkit import open_chat

CONFIG = '[agents.defaults]\nowner_ids = ["fake:alice"]\n\n[agents.defaults.model]\nprimary = "anthropic/claude-test"\n'
OWNER = {"peer_id": "alice"}
KEY = "agent:main:main"

# text: (the directives found, what is left for the model)
SPLITS = {
    "one with its text": ("/think high what is 17*23?", ((Directive("think", "high"),), "what is 17*23?")),
    "several in a row": (
        "/think high /verbose on  /usage tokens hi",
        ((Directive("think", "high"), Directive("verbose", "on"), Directive("usage", "tokens")), "hi"),
    ),
    "colon form and capitals": ("/THINK:Low hi", ((Directive("think", "low"),), "hi")),
    "a model by alias or ref": ("/model fast /model openai/gpt-4o go", ((Directive("model", "fast"), Directive("model", "openai/gpt-4o")), "go")),
    "directives alone": ("/reasoning stream /usage full", ((Directive("reasoning", "stream"), Directive("usage", "full")), "")),
    "a path is not one": ("/etc/hosts is broken", ((), "/etc/hosts is broken")),
    "a word that is not a value": ("/think about it", ((), "/think about it")),
    "an unknown name": ("/deploy now please", ((), "/deploy now please")),
    "stops at the first non-directive": ("/usage tokens /think hard please", ((Directive("usage", "tokens"),), "/think hard please")),
    "a model that is a path": ("/model /etc/passwd", ((), "/model /etc/passwd")),
    "text first": ("what is /think high", ((), "what is /think high")),
}


@pytest.mark.parametrize("case", SPLITS)
def test_only_known_directives_with_a_value_are_taken_off(case) -> None:
    text, expected = SPLITS[case]
    assert split_directives(text) == expected


async def _chat(make_kernel, fake_channel, fake_llm, **kwargs):
    anthropic = make_provider("anthropic", fake_llm)
    return await open_chat(make_kernel, fake_channel, anthropic, config=CONFIG, plugins={"llm": providers_plugin(anthropic)}, model="claude-test", **kwargs)


def _user_text(request) -> str:  # noqa: ANN001
    content = request.messages[-1]["content"]
    return content if isinstance(content, str) else " ".join(b.get("text", "") for b in content)


async def test_an_owners_inline_directives_apply_to_that_turn_only(make_kernel, fake_channel, fake_llm) -> None:
    chat = await _chat(make_kernel, fake_channel, fake_llm)
    fake_llm.reply("391", usage={"input_tokens": 1200, "output_tokens": 7})
    await fake_channel.inject("/think high /usage tokens what is 17*23?", **OWNER)
    fake_llm.reply("plain")
    await fake_channel.inject("and now?", **OWNER)
    await chat.close()
    first, second = fake_llm.requests
    assert first.body["thinking"] == {"type": "enabled", "budget_tokens": 16000}
    assert "what is 17*23?" in _user_text(first) and "/think" not in _user_text(first)
    assert "thinking" not in second.body
    assert fake_channel.texts() == ["391\n\nUsage: 1,200 in, 7 out", "plain"]


async def test_someone_elses_directives_stay_text_and_change_nothing(make_kernel, fake_channel, fake_llm) -> None:
    chat = await _chat(make_kernel, fake_channel, fake_llm)
    fake_llm.reply("ok")
    await fake_channel.inject("/think high /usage full hello", peer_id="team", chat_type="group", sender_id="mallory")
    await fake_channel.inject("/think high /usage full", peer_id="team", chat_type="group", sender_id="mallory")
    await chat.close()
    (request,) = fake_llm.requests
    assert "thinking" not in request.body and "/think high /usage full hello" in _user_text(request)
    assert fake_channel.texts() == ["ok", "Only the owner can use /think in this chat."]


async def test_directives_alone_are_kept_for_the_session_across_a_restart(make_kernel, fake_channel, fake_llm) -> None:
    chat = await _chat(make_kernel, fake_channel, fake_llm)
    await fake_channel.inject("/think medium /usage full", **OWNER)
    root = chat.kernel.sessions.root
    await chat.close()
    assert fake_channel.texts() == ["Thinking: medium in this session from its next message.\nUsage footer: full in this session from its next message."]
    assert SessionStore(root).get(KEY).settings == {"think": "medium", "usage": "full"}

    fake_channel.sent.clear()
    chat = await _chat(make_kernel, fake_channel, fake_llm)  # a restarted gateway on the same state
    fake_llm.reply("answer", usage={"input_tokens": 10, "output_tokens": 2})
    await fake_channel.inject("question", **OWNER)
    await fake_channel.inject("/think", **OWNER)
    await fake_channel.inject("/new", **OWNER)
    await fake_channel.inject("/usage", **OWNER)
    await chat.close()
    assert fake_llm.requests[-1].body["thinking"] == {"type": "enabled", "budget_tokens": 10000}
    assert fake_channel.texts()[0] == "answer\n\nUsage: 10 in, 2 out, cost not priced, anthropic/claude-test"
    assert fake_channel.texts()[1].startswith("Thinking: medium (set for this session; default off).")
    assert fake_channel.texts()[3].startswith("Usage footer: full (set for this session")  # /new keeps the chat's settings


# command: (a value it refuses, a value it takes)
SETTINGS = {"think": ("hard", "low"), "verbose": ("loud", "on"), "reasoning": ("yes", "stream"), "usage": ("cost", "tokens")}


@pytest.mark.parametrize("name", SETTINGS)
async def test_each_setting_command_shows_sets_refuses_and_goes_back(make_kernel, fake_channel, fake_llm, name) -> None:
    bad, good = SETTINGS[name]
    chat = await _chat(make_kernel, fake_channel, fake_llm)
    for text in (f"/{name} {bad}", f"/{name} {good}", f"/{name}", f"/{name} default"):
        await fake_channel.inject(text, **OWNER)
    await fake_channel.inject(f"/{name} {good}", peer_id="team", chat_type="group", sender_id="mallory")
    settings = chat.kernel.sessions.get(KEY).settings
    await chat.close()
    refused, took, shown, back, stranger = fake_channel.texts()
    assert refused.startswith(f"{bad} is not a value of /{name}. Usage: /{name} ")
    assert took.endswith(f": {good} in this session from its next message.")
    assert shown.split("\n")[0].endswith(f": {good} (set for this session; default off).")
    assert back.endswith(": off (the default) from the next message.") and settings == {}
    assert stranger == f"Only the owner can use /{name} in this chat."
    assert not fake_llm.requests


async def test_verbose_shows_each_tool_call_and_reasoning_shows_the_thinking(make_kernel, fake_channel, fake_llm) -> None:
    from clawbot import Tool, ToolResult

    lookup = Tool("lookup", "looks up", {"type": "object"}, lambda call: ToolResult.text("line one\nline two"))
    chat = await _chat(make_kernel, fake_channel, fake_llm, tools=[lookup])
    await fake_channel.inject("/verbose on /reasoning stream", **OWNER)
    fake_llm.tool_call("lookup", {"q": "x"}, thinking="I should look it up")
    fake_llm.reply("found it", thinking="Now answer")
    await fake_channel.inject("find x", **OWNER)
    await fake_channel.inject("/reasoning on", **OWNER)
    fake_llm.reply("second", thinking="Thought two")
    await fake_channel.inject("again", **OWNER)
    await chat.close()
    shown = [(m.text, m.notice) for m in fake_channel.sent[1:]]
    assert shown == [
        ("Reasoning:\nI should look it up", False),
        ('Tool lookup(q="x"): ok, 17 chars in 2 lines', True),
        ("Reasoning:\nNow answer", False),
        ("found it", False),
        ("Reasoning shown: on in this session from its next message.", True),
        ("Reasoning:\nThought two", False),
        ("second", False),
    ]


async def test_models_lists_aliases_and_marks_the_current_one(make_kernel, fake_channel, fake_llm) -> None:
    config = '\nmodel_aliases = { fast = "anthropic/claude-fast" }\n'
    anthropic = make_provider("anthropic", fake_llm)
    chat = await open_chat(
        make_kernel,
        fake_channel,
        anthropic,
        config=CONFIG.replace("\n\n[agents.defaults.model]", config + "\n[agents.defaults.model]"),
        plugins={"llm": providers_plugin(anthropic)},
        model="claude-test",
    )
    await fake_channel.inject("/models", **OWNER)
    await fake_channel.inject("/model fast", **OWNER)
    await fake_channel.inject("/models", **OWNER)
    await chat.close()
    before, _switched, after = (t.splitlines() for t in fake_channel.texts())
    assert before[:3] == [
        "Models (/model <name or alias> switches this session):",
        "* anthropic/claude-test (current)",
        "- anthropic/claude-fast (alias fast)",
    ]
    assert after[1:3] == ["- anthropic/claude-test", "* anthropic/claude-fast (alias fast; current)"]


async def test_the_owner_named_by_the_channels_own_table_has_their_directives_taken_off(make_kernel, fake_channel, fake_llm) -> None:
    """``channels.<name>.owner_ids`` make a sender the owner for directives too, as for commands."""
    from clawbot import ConfigSection
    from clawbot.testing import plugin_from_hooks
    from clawbot.types import ChannelConfig

    table = plugin_from_hooks(clawbot_config_schema=lambda: ConfigSection("channels.fake", ChannelConfig))
    config = CONFIG + '\n[channels.fake]\ngroup_policy = "open"\nrequire_mention = false\nowner_ids = ["carol"]\n'
    anthropic = make_provider("anthropic", fake_llm)
    plugins = {"llm": providers_plugin(anthropic), "table": table}
    chat = await open_chat(make_kernel, fake_channel, anthropic, config=config, plugins=plugins, model="claude-test")
    fake_llm.reply("391")
    await fake_channel.inject("/think high what is 17*23?", peer_id="team", chat_type="group", sender_id="carol")
    await chat.close()
    (request,) = fake_llm.requests
    assert request.body["thinking"] == {"type": "enabled", "budget_tokens": 16000}
    assert "what is 17*23?" in _user_text(request) and "/think" not in _user_text(request)
