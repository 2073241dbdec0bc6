"""Which agent and session a message lands in: bindings by precedence, session keys by dm_scope.

The tables drive :class:`~clawbot.gateway.routing.Router` directly; the last tests show the
gateway routing through it and the configuration refusing a binding to an unknown agent.
"""

from __future__ import annotations

import asyncio

import pytest
from clawbot import InboundMessage
from clawbot.config import ConfigError
from clawbot.config.gateway_schema import BindingConfig, BindingMatch, PeerMatch
from clawbot.gateway.routing import Router


def bind(agent: str, **match: object) -> BindingConfig:
    peer = match.pop("peer", None)
    if peer is not None:
        match["peer"] = PeerMatch(kind=peer[0], id=peer[1])
    return BindingConfig(agent_id=agent, match=BindingMatch(**match))


# every tier, listed least specific first so that list order never decides between tiers
EVERY_TIER = [
    bind("any-agent"),
    bind("channel-agent", channel="tg"),
    bind("star-agent", channel="tg", account_id="*"),
    bind("account-agent", channel="tg", account_id="bot2"),
    bind("team-agent", team_id="T1"),
    bind("guild-agent", guild_id="G1"),
    bind("peer-agent", channel="tg", peer=("direct", "alice")),
    bind("group-agent", peer=("group", "-100")),
]

MESSAGES = {
    # name: (message fields, agent, matched_by)
    "the bound peer": ({"peer_id": "alice", "account_id": "bot2", "guild_id": "G1", "team_id": "T1"}, "peer-agent", "peer"),
    "a guild member": ({"peer_id": "bob", "account_id": "bot2", "guild_id": "G1", "team_id": "T1"}, "guild-agent", "guild"),
    "a team member": ({"peer_id": "bob", "account_id": "bot2", "team_id": "T1"}, "team-agent", "team"),
    "the exact account": ({"peer_id": "bob", "account_id": "bot2"}, "account-agent", "account"),
    "another account": ({"peer_id": "bob", "account_id": "bot9"}, "star-agent", "account-any"),
    "another channel": ({"channel": "mail", "peer_id": "bob"}, "any-agent", "any"),
    "the bound peer on another channel": ({"channel": "mail", "peer_id": "alice"}, "any-agent", "any"),
    "the bound group": ({"peer_id": "-100", "chat_type": "group", "sender_id": "bob"}, "group-agent", "peer"),
    "a thread of the bound group": ({"peer_id": "-100", "chat_type": "thread", "thread_id": "7"}, "group-agent", "peer"),
    "a direct chat with the group's id": ({"peer_id": "-100", "account_id": "bot9"}, "star-agent", "account-any"),
}


@pytest.mark.parametrize("name", MESSAGES)
def test_the_most_specific_binding_wins(name) -> None:
    fields, agent, tier = MESSAGES[name]
    message = InboundMessage(**{"channel": "tg", "text": "hi", **fields})
    route = Router(EVERY_TIER, "main").route(message)
    assert (route.agent_id, route.matched_by) == (agent, tier)
    assert route.session_key.startswith(f"agent:{agent}:")
    assert EVERY_TIER[route.binding].agent_id == agent


def test_within_a_tier_the_first_listed_wins_and_no_binding_means_the_default_agent() -> None:
    bindings = [bind("first", channel="tg"), bind("second", channel="tg"), bind("mail", channel="mail")]
    router = Router(bindings, "main")
    assert router.route(InboundMessage(channel="tg", peer_id="x", text="")).agent_id == "first"
    route = router.route(InboundMessage(channel="irc", peer_id="x", text="", from_owner=True))
    assert (route.agent_id, route.matched_by, route.binding, route.session_key) == ("main", "default", None, "agent:main:main")
    assert route.describe() == "main (the default agent)"
    assert router.route(InboundMessage(channel="mail", peer_id="x", text="")).describe() == "mail (bindings[2], by channel)"


def test_a_peer_binding_needs_the_same_kind_of_chat() -> None:
    router = Router([bind("dm-agent", peer=("direct", "42"))], "main")
    assert router.route(InboundMessage(channel="tg", peer_id="42", text="")).agent_id == "dm-agent"
    assert router.route(InboundMessage(channel="tg", peer_id="42", text="", chat_type="group")).agent_id == "main"


DM = {"channel": "tg", "peer_id": "alice", "account_id": "bot2"}
GROUP = {"channel": "tg", "peer_id": "-100", "chat_type": "group", "sender_id": "alice"}
SESSION_KEYS = [
    # (dm_scope, message fields, key for the agent "work")
    ("main", {**DM, "from_owner": True}, "agent:work:main"),
    ("main", DM, "agent:work:tg:dm:alice"),  # not the owner: a session of their own
    ("per-peer", DM, "agent:work:dm:alice"),
    ("per-channel-peer", DM, "agent:work:tg:dm:alice"),
    ("per-account-channel-peer", DM, "agent:work:tg:bot2:dm:alice"),
    ("main", GROUP, "agent:work:tg:group:-100"),
    ("per-account-channel-peer", GROUP, "agent:work:tg:group:-100"),
    ("main", {**GROUP, "thread_id": "7"}, "agent:work:tg:group:-100:thread:7"),
    ("per-peer", {**GROUP, "chat_type": "channel"}, "agent:work:tg:group:-100"),
]


@pytest.mark.parametrize(("scope", "fields", "key"), SESSION_KEYS)
def test_session_keys_follow_dm_scope_for_the_routed_agent(scope, fields, key) -> None:
    message = InboundMessage(text="hi", **fields)
    assert Router([bind("work", channel="tg")], "main", scope).route(message).session_key == key
    assert Router([], "work", scope).route(message).session_key == key  # the default agent: the same shapes


async def test_the_gateway_routes_by_bindings_and_run_agent_is_only_the_default(make_kernel, fake_channel) -> None:
    from clawbot.gateway.runner import Gateway

    config = (
        '[[agents.list]]\nid = "home"\ndefault = true\n[[agents.list]]\nid = "work"\n'
        '[[bindings]]\nagent_id = "work"\nmatch = { peer = { kind = "direct", id = "boss" } }\n'
    )
    kernel = await make_kernel(config=config)
    seen: list[str] = []

    async def respond(message, session_key):  # noqa: ANN001, ANN202
        seen.append(session_key)
        return "ok"

    gateway = Gateway(kernel, respond, "cli-choice")  # what `clawbot run --agent cli-choice` makes
    task = asyncio.create_task(gateway.run([fake_channel]))
    await fake_channel.inject("hi", peer_id="boss", from_owner=True)
    await fake_channel.inject("hi", peer_id="friend", from_owner=True)
    await fake_channel.inject("/whoami", peer_id="boss", from_owner=True)
    await fake_channel.inject("/whoami", peer_id="friend", from_owner=True)
    gateway.stop()
    await task
    assert seen == ["agent:work:main", "agent:cli-choice:main"]
    assert fake_channel.texts()[-2].endswith("\nSession: agent:work:main\nAgent: work (bindings[0], by peer)")
    assert fake_channel.texts()[-1].endswith("\nSession: agent:cli-choice:main\nAgent: cli-choice (the default agent)")


@pytest.mark.parametrize(
    ("agents", "agent_id", "problem"),
    [
        ("", "wrok", "bindings[1].agent_id: no agent 'wrok' in agents.list (configured agents: main)"),
        ('[[agents.list]]\nid = "work"\n', "wrok", "bindings[1].agent_id: no agent 'wrok' in agents.list (did you mean work?)"),
    ],
)
async def test_a_binding_to_an_agent_nobody_configured_is_a_config_error(make_kernel, agents, agent_id, problem) -> None:
    first = '[[agents.list]]\nid = "main"\n' if agents else ""
    config = f'{first}{agents}[[bindings]]\nagent_id = "main"\n[[bindings]]\nagent_id = "{agent_id}"\nmatch = {{ channel = "tg" }}\n'
    with pytest.raises(ConfigError) as caught:
        await make_kernel(config=config)
    assert [str(p) for p in caught.value.problems] == [problem]
