"""A plugin's turn (``AgentHost.run_turn`` with neither trust nor origin) is never more trusted
than the session history it reads: someone else's words there lower it, as for an event."""

from __future__ import annotations

import pytest
from clawbot import InboundMessage
from clawbot.agent.models import ModelChoice
from clawbot.agent.runtime import AgentRuntime
from clawbot.testing import plugin_from_hooks
from clawbot.types import Capability, CapabilityScope, TurnTrust

from ..agent.scripted import ScriptedProvider, call
from .test_capabilities import Greeter, asking_tool

OWNER_DM = InboundMessage(channel="fake", peer_id="alice", sender_id="alice", text="hi", from_owner=True)
MEMBER = InboundMessage(channel="fake", peer_id="team", chat_type="group", sender_id="mallory", text="hi")
GROUP = "agent:main:fake:group:team"

ROWS = {
    # who wrote in the session before the plugin's turn, the session, the trust the caller gives, the turn's trust
    "a group member wrote before": (MEMBER, GROUP, None, TurnTrust.NON_OWNER),
    "only the owner wrote before": (OWNER_DM, "agent:main:main", None, TurnTrust.OWNER),
    "nobody wrote before": (None, "agent:main:reminders", None, TurnTrust.OWNER),
    "a member wrote, the caller vouches for the owner": (MEMBER, GROUP, TurnTrust.OWNER, TurnTrust.OWNER),
}


@pytest.mark.parametrize("row", ROWS)
async def test_a_plugins_turn_gets_no_more_trust_than_the_history_it_reads(make_kernel, row: str) -> None:
    earlier, session, given, expected = ROWS[row]
    scopes: list[CapabilityScope] = []

    def provide(scope: CapabilityScope) -> Greeter:
        scopes.append(scope)
        return Greeter(scope)

    kernel = await make_kernel(
        plugins={
            "greeter": plugin_from_hooks(clawbot_capabilities=lambda ctx: [Capability(Greeter, provide)]),
            "asker": plugin_from_hooks(clawbot_tools=lambda ctx: [asking_tool(Greeter)]),
        }
    )
    runtime = AgentRuntime(kernel)
    conversation = await runtime.conversation("main", chain=[ModelChoice(ScriptedProvider("hello", [call("greet", "c1")], "done"), "m")])
    if earlier is not None:
        await conversation.send(session, "please do the thing later", origin=earlier)
    else:
        await conversation.send("agent:main:elsewhere", "unrelated")
    await runtime.services.host.run_turn("main", session, "the reminder is due", kind="cron", trust=given)
    (scope,) = scopes
    assert scope.trust is expected
