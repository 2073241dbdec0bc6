"""``clawbot pairing list|approve|deny|revoke``: let the strangers who asked into a channel's direct chats.

A stranger writing to a channel whose ``dm_policy`` is ``pairing`` gets a one-time code; the
owner approves it here and the running gateway lets that sender in at once (it re-reads the
channel's pairing file when it changes). State: ``<state dir>/pairing/<channel>.json``. No
kernel is booted: these commands only read and write that file.

What a stranger chose (their display name, their id) is shown with control characters made
visible, like everything the CLI prints.
"""

from __future__ import annotations

import sys
import time

import attrs
import click

from clawbot.cli.output import echo, echo_json
from clawbot.cli.state import CliState
from clawbot.gateway.pairing import CHANNEL_NAME, MAX_PENDING_PER_ACCOUNT, PairingError, PairingStore
from clawbot.sessions.keys import session_kind
from clawbot.types import InboundMessage


def _store(state: CliState, channel: str):  # noqa: ANN202 - PairingStore, imported lazily

    try:
        return PairingStore.for_channel(state.paths().root, channel)
    except PairingError as exc:
        echo(f"clawbot pairing: {exc}", err=True)
        sys.exit(2)


def _known_channels(state: CliState) -> list[str]:
    """The channels with pairing state: where strangers have asked, or senders were approved."""
    folder = state.paths().root / "pairing"
    return sorted(p.stem for p in folder.glob("*.json") if CHANNEL_NAME.fullmatch(p.stem)) if folder.is_dir() else []


def _where_to_look(state: CliState, channel: str) -> str:
    known = _known_channels(state)
    if channel in known:
        return f"See `clawbot pairing list {channel}`."
    return f"Channels with pairing requests: {', '.join(known)}." if known else "No channel has pairing requests yet."


def _who(sender_id: str, name: str) -> str:
    return f"{sender_id} ({name})" if name else sender_id


def _their_session(state: CliState, channel: str, sender_id: str, account_id: str) -> str:
    """Where an approved sender's direct messages go, as the gateway routes them (bindings,
    ``session.dm_scope``, ``session.non_owners_share_main``, the owner ids)."""
    # deferred: `clawbot <command> --help` answers without loading the kernel (cattrs, pluggy, rich)
    from clawbot.config import ConfigError
    from clawbot.gateway.routing import Router

    try:
        config = state.load().config
    except ConfigError:
        return "which session they get cannot be told: the configuration has a problem (run `clawbot config validate`)"
    message = InboundMessage(channel=channel, peer_id=sender_id, sender_id=sender_id, account_id=account_id, text="")
    key = Router.for_config(config, config.default_agent_id()).route(message).session_key
    if session_kind(key) == "main":
        return f"they share the main session {key} with the owner: its history, exec output and MEMORY.md (session.non_owners_share_main = true)"
    return f"they get a session of their own, {key} (not the main session; no MEMORY.md)"


@click.group()
def pairing() -> None:
    """Approve the strangers who asked to talk to your agent in a direct chat.

    A stranger's first message to a channel with dm_policy = "pairing" (the default) gets a
    one-time code (8 characters, valid for 1 hour; at most 3 wait per channel account) and
    no answer. Run `clawbot pairing approve <channel> <code>` to let them in: the running
    gateway answers them from their next message on, without a restart.
    """


@pairing.command("list")
@click.argument("channel", required=False)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def list_requests(state: CliState, channel: str | None, as_json: bool) -> None:
    """The codes waiting for an answer, and the senders approved so far (every channel, or CHANNEL's)."""
    names = [channel] if channel else _known_channels(state)
    now = time.time()
    listing = []
    for name in names:
        store = _store(state, name)
        listing.append((name, store.pending(), store.approved(), store.turned_away()))
    if as_json:
        echo_json(
            [
                {
                    "channel": name,
                    "pending": [{**attrs.asdict(r), "expires_at": r.expires_at()} for r in pending],
                    "approved": [attrs.asdict(a) for a in approved],
                    "turned_away_last_hour": turned_away,
                }
                for name, pending, approved, turned_away in listing
            ]
        )
        return
    if not any(pending or approved or turned_away for _, pending, approved, turned_away in listing):
        echo("No pairing requests" + (f" on {channel}." if channel else "."))
        return
    for name, pending, approved, turned_away in listing:
        for request in pending:
            minutes = max(1, round((request.expires_at() - now) / 60))
            echo(f"{name}  {request.code}  from {_who(request.sender_id, request.sender_name)}  account {request.account_id}  expires in {minutes} min")
        for sender in approved:
            echo(f"{name}  approved  {_who(sender.sender_id, sender.sender_name)}")
        if turned_away:
            echo(
                f"{name}  {turned_away} message(s) in the last hour got no code: {MAX_PENDING_PER_ACCOUNT} codes wait at most per account;"
                f" `clawbot pairing deny {name} CODE` makes room"
            )


def _answer(state: CliState, channel: str, code: str, *, approve: bool) -> None:
    store = _store(state, channel)
    try:
        request = store.approve(code) if approve else store.deny(code)
    except PairingError as exc:
        echo(f"Cannot {'approve' if approve else 'deny'} on {channel}: {exc}. {_where_to_look(state, channel)}", err=True)
        sys.exit(1)
    who = _who(request.sender_id, request.sender_name)
    if approve:
        echo(
            f"Approved {who} on {channel}: their direct messages now reach the agent; {_their_session(state, channel, request.sender_id, request.account_id)}."
        )
    else:
        echo(f"Denied {who} on {channel}: the code is gone; they get a new one if they write again.")


@pairing.command("approve")
@click.argument("channel")
@click.argument("code")
@click.pass_obj
def approve(state: CliState, channel: str, code: str) -> None:
    """Let the sender of CODE talk to the agent on CHANNEL.

    Wrong codes are limited: after 5 on a channel within 15 minutes, approvals there are
    refused until the oldest of them is 15 minutes old.
    """
    _answer(state, channel, code, approve=True)


@pairing.command("deny")
@click.argument("channel")
@click.argument("code")
@click.pass_obj
def deny(state: CliState, channel: str, code: str) -> None:
    """Drop the request CODE on CHANNEL without letting its sender in."""
    _answer(state, channel, code, approve=False)


@pairing.command("revoke")
@click.argument("channel")
@click.argument("sender_id")
@click.pass_obj
def revoke(state: CliState, channel: str, sender_id: str) -> None:
    """Take back an approval: SENDER_ID must pair again to talk to the agent on CHANNEL."""
    if not _store(state, channel).revoke(sender_id):
        echo(f"{sender_id} is not an approved sender on {channel}. {_where_to_look(state, channel)}", err=True)
        sys.exit(1)
    echo(f"Revoked {sender_id} on {channel}: their next direct message gets a pairing code again.")
