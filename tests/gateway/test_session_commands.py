"""Session commands (/help /commands /status /new /reset /whoami /model), answered by the
gateway in the chat itself: never sent to the model, whoever types them.

Real kernel, gateway, session files and providers (the official SDKs), talking to the fake
LLM; only the chat network is the fake channel.
"""

from __future__ import annotations

import asyncio

import pytest
from clawbot import ChatCommand
from clawbot.sessions.transcript import load_transcript
from clawbot.testing import plugin_from_hooks

from ..agent.scripted import ScriptedProvider
from ..e2e.e2etools import make_provider, providers_plugin
from .chatkit import eventually, open_chat

KEY = "agent:main:main"
REFUSED = "Only the owner can use /{name} in this chat."
CONFIG = '[agents.defaults]\nowner_ids = ["fake:alice"]\n\n[[usage.prices]]\nmodel = "anthropic/claude-test"\ninput = 3.0\noutput = 15.0\n'
PER_PEER = '\n[session]\ndm_scope = "per-peer"\n'

# command -> the start of what someone allowed to use it reads
COMMANDS = {
    "/help": "clawbot answers these commands itself",
    "/commands": "/help - ",
    "/status": "Session: agent:main:",
    "/whoami": "Channel: fake (direct chat",
    "/model": "This session uses anthropic/claude-test (configured).",
    "/model openai/gpt-test": "This session now uses openai/gpt-test from its next message",
    "/model antropic/claude-test": "model 'antropic/claude-test': no provider named 'antropic' is installed",
    "/new": "Started a new session",
    "/reset": "Started a new session",
}
OPEN = ("/help", "/commands", "/whoami")
# what a sender who controls their own session but is not the owner reads instead
NOT_THE_OWNER = {"/model openai/gpt-test": "Only the owner can choose openai/gpt-test: it is not among the configured models."}
SENDERS = {  # who: (message fields, extra config, may control the session)
    "the owner": ({"peer_id": "alice"}, "", True),
    "a stranger in the owner's main session": ({"peer_id": "bob"}, "\n[session]\nnon_owners_share_main = true\n", False),
    "a stranger in their own session": ({"peer_id": "bob"}, PER_PEER, True),
}


async def _chat(make_kernel, fake_channel, fake_llm, config: str = CONFIG, plugins: dict | None = None):
    anthropic, openai = make_provider("anthropic", fake_llm), make_provider("openai-chat", fake_llm)
    plugins = {"llm": providers_plugin(anthropic, openai), **(plugins or {})}
    return await open_chat(make_kernel, fake_channel, anthropic, config=config, plugins=plugins, model="claude-test")


@pytest.mark.parametrize("who", SENDERS)
@pytest.mark.parametrize("command", COMMANDS)
async def test_no_session_command_reaches_the_model(make_kernel, fake_channel, fake_llm, command, who) -> None:
    fields, extra, controls = SENDERS[who]
    chat = await _chat(make_kernel, fake_channel, fake_llm, CONFIG + extra)
    await fake_channel.inject(command, **fields)
    await chat.close()
    assert fake_llm.requests == []
    [reply] = fake_channel.sent
    allowed = controls or command in OPEN
    expected = NOT_THE_OWNER.get(command, COMMANDS[command]) if fields["peer_id"] != "alice" else COMMANDS[command]
    assert reply.text.startswith(expected) if allowed else reply.text == REFUSED.format(name=command.split()[0][1:])
    assert reply.notice  # clawbot's own words, never the model's


async def _events(make_kernel, fake_channel, fake_llm):
    events: list[tuple[str, str, str]] = []
    hooks = plugin_from_hooks(
        clawbot_session_start=lambda event: events.append(("start", event.session_id, event.reason)),
        clawbot_session_end=lambda event: events.append(("end", event.session_id, event.reason)),
    )
    return events, await _chat(make_kernel, fake_channel, fake_llm, plugins={"lifecycle": hooks})


@pytest.mark.hook_emission("clawbot_session_end", "clawbot_session_start")
@pytest.mark.parametrize("command", ["/new", "/reset"])
async def test_hook_session_end_is_fired_by_a_new_session_in_a_chat(make_kernel, fake_channel, fake_llm, command) -> None:
    events, chat = await _events(make_kernel, fake_channel, fake_llm)
    fake_llm.reply("first answer")
    await fake_channel.inject("remember 42", peer_id="alice")
    old = chat.kernel.sessions.get(KEY)
    old_path = chat.kernel.sessions.path_of(old, "main")
    await fake_channel.inject(command, peer_id="alice")
    new = chat.kernel.sessions.get(KEY)
    fake_llm.reply("second answer")
    await fake_channel.inject("what did I say?", peer_id="alice")
    await chat.close()

    assert new.session_id != old.session_id and new.turns == 0
    assert events == [("start", old.session_id, "first message"), ("end", old.session_id, command), ("start", new.session_id, command)]
    assert "remember 42" in old_path.read_text()  # the old conversation is kept on disk
    from clawbot.agent.inbound import unwrapped

    [user] = fake_llm.requests[-1].messages  # the new session starts empty: no earlier turn is sent
    assert unwrapped(user["content"] if isinstance(user["content"], str) else user["content"][0]["text"])[1] == "what did I say?"


async def test_new_with_text_starts_the_new_session_with_it(make_kernel, fake_channel, fake_llm) -> None:
    events, chat = await _events(make_kernel, fake_channel, fake_llm)
    fake_llm.reply("old")
    await fake_channel.inject("hello", peer_id="alice")
    fake_llm.reply("Fresh start, happy to plan the trip.")
    await fake_channel.inject("/new plan a trip to Lisbon", peer_id="alice")
    await chat.close()
    assert fake_channel.texts()[-2:] == [
        "Started a new session; the previous conversation is kept on disk.",
        "Fresh start, happy to plan the trip.",
    ]
    assert len(fake_llm.requests[-1].messages) == 1
    assert [e[0] for e in events] == ["start", "end", "start"]
    assert chat.kernel.sessions.get(KEY).turns == 1


async def test_new_stops_the_running_turn_first(make_kernel, fake_channel) -> None:
    provider = ScriptedProvider("too late", delay=5)
    chat = await open_chat(make_kernel, fake_channel, provider)
    await fake_channel.inject("think for a long time", peer_id="alice", from_owner=True, wait=False)
    await eventually(lambda: provider.requests)
    old = chat.kernel.sessions.get(KEY)
    async with asyncio.timeout(3):
        await fake_channel.inject("/new", peer_id="alice", from_owner=True)
    await chat.close()
    assert fake_channel.texts() == ["Started a new session; the previous conversation is kept on disk. The running turn was stopped."]
    kinds = [e.data.get("kind") for e in load_transcript(chat.kernel.sessions.path_of(old, "main"), chat.kernel.sessions.converter).entries]
    assert "aborted" in kinds
    assert chat.kernel.sessions.get(KEY).session_id != old.session_id


async def _with_fallback(chat, fake_llm) -> None:
    """The agent's chain gets a fallback model, which a /model choice must never use."""
    from clawbot.agent.models import ModelChoice

    anthropic = chat.kernel.llm_providers.get("anthropic")
    await chat.runtime.conversation("main", chain=[ModelChoice(anthropic, "claude-test"), ModelChoice(anthropic, "claude-backup")])


async def test_model_is_chosen_for_this_session_only_and_survives_a_restart(make_kernel, fake_channel, fake_llm) -> None:
    chat = await _chat(make_kernel, fake_channel, fake_llm, CONFIG + PER_PEER)
    await fake_channel.inject("/model openai/gpt-test", peer_id="alice")
    fake_llm.reply("from gpt")
    await fake_channel.inject("hi", peer_id="alice")
    fake_llm.reply("from claude")
    await fake_channel.inject("hi", peer_id="carol")  # another session keeps the configured model
    await chat.close()
    assert [(r.api, r.model) for r in fake_llm.requests] == [("openai-chat", "gpt-test"), ("anthropic", "claude-test")]

    fake_channel.sent.clear()
    again = await _chat(make_kernel, fake_channel, fake_llm, CONFIG + PER_PEER)  # a restarted gateway
    await _with_fallback(again, fake_llm)
    await fake_channel.inject("/model", peer_id="alice")
    fake_llm.fail("unknown_model", model="gpt-test")
    await fake_channel.inject("still there?", peer_id="alice")
    await fake_channel.inject("/model default", peer_id="alice")
    fake_llm.reply("claude again")
    await fake_channel.inject("and now?", peer_id="alice")
    await again.close()
    texts = fake_channel.texts()
    assert texts[0].startswith("This session uses openai/gpt-test (chosen with /model).")
    assert "anthropic/claude-test" in texts[0]  # the configured choices are listed
    assert [r.model for r in fake_llm.requests[2:]] == ["gpt-test", "claude-test"]  # an explicit choice never falls back
    assert "gpt-test" in texts[1] and "Traceback" not in texts[1]  # the provider says the model is unknown
    assert texts[2] == "This session uses the configured model again: anthropic/claude-test."
    assert texts[-1] == "claude again"


async def test_a_bare_model_name_finds_the_configured_model(make_kernel, fake_channel, fake_llm) -> None:
    chat = await _chat(make_kernel, fake_channel, fake_llm)
    await fake_channel.inject("/model claude-test", peer_id="alice")
    await chat.close()
    assert fake_channel.texts()[0].startswith("This session now uses anthropic/claude-test from its next message")
    assert chat.kernel.sessions.get(KEY).model_override == "anthropic/claude-test"


async def test_an_unknown_provider_is_refused_and_nothing_changes(make_kernel, fake_channel, fake_llm) -> None:
    chat = await _chat(make_kernel, fake_channel, fake_llm)
    await fake_channel.inject("/model antropic/claude-opus", peer_id="alice")
    await fake_channel.inject("/model opus-9", peer_id="alice")
    await chat.close()
    assert fake_channel.texts()[0] == (
        "model 'antropic/claude-opus': no provider named 'antropic' is installed (installed: anthropic, openai). Did you mean anthropic/claude-opus?"
    )
    assert fake_channel.texts()[1].startswith("model 'opus-9' must be written <provider>/<model>")
    info = chat.kernel.sessions.get(KEY)
    assert info is None or info.model_override is None


async def test_status_shows_model_tokens_context_cost_and_resting_keys(make_kernel, fake_channel, fake_llm) -> None:
    chat = await _chat(make_kernel, fake_channel, fake_llm)
    fake_llm.reply("hello", usage={"input_tokens": 1000, "output_tokens": 200, "cache_read_tokens": 3000})
    await fake_channel.inject("hi", peer_id="alice")
    auth = chat.kernel.auth
    auth.cool_down(auth.profiles("anthropic")[0], "rate_limit", asked=120)
    await fake_channel.inject("/status", peer_id="alice")
    await chat.close()
    status = fake_channel.texts()[-1].splitlines()
    estimate = status.pop(4)  # its figures: tests/agent/test_token_estimates.py
    assert estimate.startswith("Token estimate: off by ") and "(1 request;" in estimate
    assert status[:6] == [
        "Session: agent:main:main (1 turns)",
        "Model: anthropic/claude-test (configured)",
        "Tokens: 4,000 in (75% from the cache), 200 out",
        "Context: 4,200 of 200,000 tokens (2%) at the last request",
        "Cost: $0.0060",
        "Auth profile: default",
    ]
    assert status[6] == "Resting keys: "
    assert status[7].startswith("  anthropic key default: rate limit, until ") and "(in 2 min)" in status[7]


async def test_whoami_says_who_the_sender_is_and_whether_they_are_the_owner(make_kernel, fake_channel, fake_llm) -> None:
    chat = await _chat(make_kernel, fake_channel, fake_llm)
    await fake_channel.inject("/whoami", peer_id="alice", sender_name="Alice")
    await fake_channel.inject("/whoami", peer_id="team", chat_type="group", sender_id="bob")
    await chat.close()
    assert fake_channel.texts()[0].splitlines() == [
        "Channel: fake (direct chat alice)",
        "Sender id: alice",
        "Name: Alice",
        "Owner: yes (agents.defaults.owner_ids lists you)",
        "Session: agent:main:main",
        "Agent: main (the default agent)",
    ]
    assert fake_channel.texts()[1].splitlines()[1:] == [
        "Sender id: bob",
        "Owner: no (add <channel>:<sender id> to agents.defaults.owner_ids to make a sender the owner)",
        "Session: agent:main:fake:group:team",
        "Agent: main (the default agent)",
    ]


async def test_help_lists_the_built_ins_and_the_plugins_commands(make_kernel, fake_channel, fake_llm) -> None:
    commands = plugin_from_hooks(clawbot_chat_commands=lambda ctx: [ChatCommand("weather", "today's forecast", lambda c: "sunny")])
    chat = await _chat(make_kernel, fake_channel, fake_llm, plugins={"cmds": commands})
    await fake_channel.inject("/help", peer_id="alice")
    await fake_channel.inject("/commands", peer_id="alice")
    await chat.close()
    help_text, listing = fake_channel.texts()
    for name in ("help", "commands", "status", "new", "reset", "model", "whoami", "context", "stop", "approve", "deny"):
        assert f"\n/{name} - " in help_text and (f"/{name} - " in listing)
    assert help_text.endswith("From plugins:\n/weather - today's forecast") and listing.endswith("/weather - today's forecast")
