"""``clawbot pairing``: a stranger's DM gets a code and no turn; the owner approves it from the
command line while the gateway runs, and the stranger's next DM is answered.

The gateway runs in this process with the fake channel on the real channels' default rules;
the approval is a real ``clawbot`` process (another process changing the file the gateway
reads), the other commands run in process.
"""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys
from pathlib import Path

import clawbot_pairing.plugin
import pytest
from clawbot.testing import FakeChannel
from clawbot.testing.cli import invoke_cli, subprocess_env
from clawbot.types import ChannelConfig
from clawbot_pairing.store import PairingStore


def run_cli(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    """``clawbot ARGS`` in a process of its own, as the owner runs it beside the gateway."""
    command = [sys.executable, "-m", "clawbot.cli.main", *args]
    return subprocess.run(command, cwd=home, env=subprocess_env(home), capture_output=True, text=True, timeout=60)


async def _echo(message, session_key):  # noqa: ANN001, ANN202
    return f"agent: {message.text}"


async def test_a_stranger_is_let_in_by_clawbot_pairing_approve_without_a_restart(make_kernel, clawbot_home) -> None:
    channel = FakeChannel("chat", access=ChannelConfig())
    kernel = await make_kernel(plugins={"chat": channel.as_plugin(), "pairing": clawbot_pairing.plugin})
    gateway = kernel.gateway(_echo)
    task = asyncio.create_task(gateway.run([channel]))
    for text in ("hello?", "hello??", "HELLO???", "anyone"):
        await channel.inject(text, peer_id="4242", sender_name="Bob")
    assert len(channel.sent) == 1  # one code, however often they write
    notice = channel.sent[0].text
    code = re.search(r"Your pairing code: ([A-Z2-9]{8}) ", notice).group(1)
    assert f"Ask my owner to run: clawbot pairing approve chat {code}" in notice

    listing = invoke_cli("pairing", "list", home=clawbot_home)
    assert listing.returncode == 0 and re.search(rf"^chat  {code}  from 4242 \(Bob\)  account default  expires in 60 min$", listing.stdout, re.M)
    wrong = invoke_cli("pairing", "approve", "chat", "ABCDEFGH", home=clawbot_home)
    assert wrong.returncode == 1 and wrong.stdout == ""
    assert (
        wrong.stderr
        == "Cannot approve on chat: no pending request has the code 'ABCDEFGH' (codes expire 1 hour after they were sent). See `clawbot pairing list chat`.\n"
    )

    approved = run_cli("pairing", "approve", "chat", code.lower(), home=clawbot_home)
    assert approved.returncode == 0, approved.stderr
    assert approved.stdout == (
        "Approved 4242 (Bob) on chat: their direct messages now reach the agent;"
        " they get a session of their own, agent:main:chat:dm:4242 (not the main session; no MEMORY.md).\n"
    )
    await channel.inject("now?", peer_id="4242")
    assert channel.texts()[1:] == ["agent: now?"]
    assert "chat  approved  4242 (Bob)" in invoke_cli("pairing", "list", "chat", home=clawbot_home).stdout
    [listed] = json.loads(invoke_cli("pairing", "list", "--json", home=clawbot_home).stdout)
    assert listed["channel"] == "chat" and listed["pending"] == [] and listed["approved"][0]["sender_id"] == "4242"

    revoked = invoke_cli("pairing", "revoke", "chat", "4242", home=clawbot_home)
    assert revoked.returncode == 0 and "Revoked 4242 on chat" in revoked.stdout
    await channel.inject("still there?", peer_id="4242")
    assert "Your pairing code:" in channel.texts()[-1]
    gateway.stop()
    await task
    await kernel.aclose()


def test_pairing_commands_say_clearly_what_is_wrong(clawbot_home) -> None:
    assert invoke_cli("pairing", "list", home=clawbot_home).stdout == "No pairing requests.\n"
    bad = invoke_cli("pairing", "approve", "../secrets", "ABCDEFGH", home=clawbot_home)
    assert bad.returncode == 2 and bad.stderr == "clawbot pairing: '../secrets' is not a channel name (letters, digits, '-', '_' and '.', not first)\n"
    unknown = invoke_cli("pairing", "approve", "telegarm", "ABCDEFGH", home=clawbot_home)
    assert unknown.returncode == 1 and unknown.stderr.startswith("Cannot approve on telegarm: nobody has asked to pair on this channel.")
    assert not (clawbot_home / "pairing" / "telegarm.json").exists()
    PairingStore.for_channel(clawbot_home, "chat").ask("bob", "default")
    for _ in range(5):
        invoke_cli("pairing", "approve", "chat", "WRONG234", home=clawbot_home)
    limited = invoke_cli("pairing", "approve", "chat", "WRONG234", home=clawbot_home)
    assert limited.returncode == 1 and "too many wrong codes on this channel lately: try again in 15 min" in limited.stderr
    denied = invoke_cli("pairing", "deny", "chat", "NOPE2345", home=clawbot_home)
    assert denied.returncode == 1 and denied.stderr.startswith("Cannot deny on chat: too many wrong codes")
    missing = invoke_cli("pairing", "revoke", "chat", "nobody", home=clawbot_home)
    assert missing.returncode == 1 and "nobody is not an approved sender on chat" in missing.stderr
    # a misspelt channel names the channels that have requests, and leaves nothing behind
    typo = invoke_cli("pairing", "approve", "chta", "ABCDEFGH", home=clawbot_home)
    assert typo.returncode == 1 and typo.stderr.rstrip().endswith("Channels with pairing requests: chat.")
    typo = invoke_cli("pairing", "revoke", "chta", "42", home=clawbot_home)
    assert typo.returncode == 1 and typo.stderr.rstrip().endswith("Channels with pairing requests: chat.")
    assert sorted(p.name for p in (clawbot_home / "pairing").iterdir()) == ["chat.json", "chat.json.lock"]


def test_the_owner_learns_when_strangers_got_no_code_because_the_queue_was_full(clawbot_home) -> None:
    store = PairingStore.for_channel(clawbot_home, "chat")
    codes = [store.ask(sender, "default").code for sender in ("a", "b", "c")]
    assert store.ask("d", "default").code is None and store.ask("e", "default").code is None  # no room: silence for them
    listing = invoke_cli("pairing", "list", "chat", home=clawbot_home).stdout
    assert "chat  2 message(s) in the last hour got no code: 3 codes wait at most per account; `clawbot pairing deny chat CODE` makes room" in listing
    [listed] = json.loads(invoke_cli("pairing", "list", "--json", home=clawbot_home).stdout)
    assert listed["turned_away_last_hour"] == 2 and len(listed["pending"]) == 3
    store.deny(codes[0])
    assert store.ask("d", "default").code is not None


APPROVED_INTO = [
    # (config, what `pairing approve` says of the session)
    ("", "they get a session of their own, agent:main:chat:dm:4242 (not the main session; no MEMORY.md)"),
    ('[session]\ndm_scope = "per-peer"\n', "they get a session of their own, agent:main:dm:4242 (not the main session; no MEMORY.md)"),
    (
        '[[agents.list]]\nid = "home"\ndefault = true\n[[agents.list]]\nid = "guests"\n[[bindings]]\nagent_id = "guests"\nmatch = { channel = "chat" }\n',
        "they get a session of their own, agent:guests:chat:dm:4242 (not the main session; no MEMORY.md)",
    ),
    (
        "[session]\nnon_owners_share_main = true\n",
        "they share the main session agent:main:main with the owner: its history, exec output and MEMORY.md (session.non_owners_share_main = true)",
    ),
    ("[session]\ndm_scope = 7\n", "which session they get cannot be told: the configuration has a problem (run `clawbot config validate`)"),
]


@pytest.mark.parametrize(("config", "session"), APPROVED_INTO)
def test_pairing_approve_says_which_session_the_sender_gets(clawbot_home, config, session) -> None:
    (clawbot_home / "clawbot.toml").write_text(config)
    store = PairingStore.for_channel(clawbot_home, "chat")
    code = store.ask("4242", "default", "Bob").code
    approved = invoke_cli("--config", str(clawbot_home / "clawbot.toml"), "pairing", "approve", "chat", code, home=clawbot_home)
    assert approved.returncode == 0, approved.stderr
    assert approved.stdout == f"Approved 4242 (Bob) on chat: their direct messages now reach the agent; {session}.\n"
    assert store.is_approved("4242")  # approved whatever the configuration says
