"""Who writes into the owner's main session, and who gets MEMORY.md in what the model reads.

The main session holds the owner's history (their exec output) and is the one session whose
prompt carries MEMORY.md. Under every ``session.dm_scope`` only the owner's direct messages
reach it, unless ``session.non_owners_share_main`` opts everyone in: a stranger approved by
pairing, an ``allow_from`` member and a group member each get a session of their own.

Real kernel, gateway, workspace plugin, pairing file and Anthropic SDK talking to the fake
LLM; what the model received is read from the fake's recorded requests.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import clawbot_pairing.plugin
import clawbot_workspace.plugin
import pytest
from clawbot.agent.models import ModelChoice
from clawbot.agent.runtime import AgentRuntime
from clawbot.gateway.runner import Gateway
from clawbot.testing import FakeChannel
from clawbot.types import ChannelConfig
from clawbot_pairing.store import PairingStore

from ..e2e.e2etools import MODEL, make_provider

MEMORY_SECRET = "the safe code is 4711"
CHANNEL = ChannelConfig(allow_from=["carol"], groups=["team"], require_mention=False)

SENDERS = {
    # who: message fields
    "the owner": {"peer_id": "alice"},
    "a stranger approved by pairing": {"peer_id": "bob"},
    "an allow_from member": {"peer_id": "carol"},
    "a group member": {"peer_id": "team", "chat_type": "group", "sender_id": "mallory"},
}
SCOPES = {
    # name: [session] table
    "main (the default)": "",
    "main, shared with non-owners": "non_owners_share_main = true\n",
    "per-peer": 'dm_scope = "per-peer"\n',
    "per-channel-peer": 'dm_scope = "per-channel-peer"\n',
    "per-account-channel-peer": 'dm_scope = "per-account-channel-peer"\n',
}
GROUP_KEY = "agent:main:fake:group:team"
EXPECTED = {
    # (who, scope): (session key, MEMORY.md in the prompt)
    ("the owner", "main (the default)"): ("agent:main:main", True),
    ("the owner", "main, shared with non-owners"): ("agent:main:main", True),
    ("the owner", "per-peer"): ("agent:main:dm:alice", False),
    ("the owner", "per-channel-peer"): ("agent:main:fake:dm:alice", False),
    ("the owner", "per-account-channel-peer"): ("agent:main:fake:default:dm:alice", False),
    ("a stranger approved by pairing", "main (the default)"): ("agent:main:fake:dm:bob", False),
    ("a stranger approved by pairing", "main, shared with non-owners"): ("agent:main:main", True),
    ("a stranger approved by pairing", "per-peer"): ("agent:main:dm:bob", False),
    ("a stranger approved by pairing", "per-channel-peer"): ("agent:main:fake:dm:bob", False),
    ("a stranger approved by pairing", "per-account-channel-peer"): ("agent:main:fake:default:dm:bob", False),
    ("an allow_from member", "main (the default)"): ("agent:main:fake:dm:carol", False),
    ("an allow_from member", "main, shared with non-owners"): ("agent:main:main", True),
    ("an allow_from member", "per-peer"): ("agent:main:dm:carol", False),
    ("an allow_from member", "per-channel-peer"): ("agent:main:fake:dm:carol", False),
    ("an allow_from member", "per-account-channel-peer"): ("agent:main:fake:default:dm:carol", False),
    **{("a group member", scope): (GROUP_KEY, False) for scope in SCOPES},
}


def test_the_table_covers_every_sender_and_scope() -> None:
    assert set(EXPECTED) == {(who, scope) for who in SENDERS for scope in SCOPES}


def _approve_by_pairing(home: Path, sender: str) -> None:
    """What a stranger's first message and the owner's `clawbot pairing approve` leave behind."""
    store = PairingStore.for_channel(home, "fake")
    asked = store.ask(sender, "default", "Bob")
    assert asked.code is not None
    store.approve(asked.code)


@pytest.mark.parametrize("scope", SCOPES)
@pytest.mark.parametrize("who", SENDERS)
async def test_session_and_memory_by_sender_and_dm_scope(make_kernel, clawbot_home, fake_llm, workspace, who, scope) -> None:
    (workspace / "MEMORY.md").write_text(f"# Memory\n{MEMORY_SECRET}\n")
    (workspace / "AGENTS.md").write_text("# Agents\nBe brief.\n")
    _approve_by_pairing(clawbot_home, "bob")
    channel = FakeChannel(access=CHANNEL)
    config = f'[agents.defaults]\nworkspace = "{workspace}"\nowner_ids = ["fake:alice"]\n\n[session]\n{SCOPES[scope]}'
    kernel = await make_kernel(plugins={"workspace": clawbot_workspace.plugin, "fake": channel.as_plugin(), "pairing": clawbot_pairing.plugin}, config=config)
    provider = make_provider("anthropic", fake_llm)
    runtime = AgentRuntime(kernel)
    await runtime.conversation("main", chain=[ModelChoice(provider, MODEL["anthropic"])])
    gateway = Gateway(kernel, runtime.respond, "main", runtime=runtime)
    task = asyncio.create_task(gateway.run([channel]))
    fake_llm.reply("hello")
    try:
        await channel.inject("what do you remember?", **SENDERS[who])
        keys = [info.key for info in kernel.sessions.list()]
    finally:
        gateway.stop()
        await task
        await runtime.aclose()
        await provider.aclose()
        await kernel.aclose()
    key, memory = EXPECTED[(who, scope)]
    assert channel.texts() == ["hello"]
    assert keys == [key]
    [request] = fake_llm.requests
    sent = json.dumps(request.body)
    assert "Be brief." in sent  # the workspace files are loaded at all
    assert (MEMORY_SECRET in sent) is memory
