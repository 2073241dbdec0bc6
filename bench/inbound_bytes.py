"""Bytes a user message costs: the metadata around it, newest and on every later turn.

Run:  uv run python bench/inbound_bytes.py [--before 0ca091a] [--turns 20]

Renders representative messages (the owner in the terminal, a stranger's Telegram-like
direct message, a group message with a mention and a reply, a system event, another
session's message) with the renderer of git revision ``--before`` (read with ``git show``:
it stored the rendered envelope and re-sent it unchanged on every later turn) and with the
working tree's (the newest message in full, older ones as their body). Prints UTF-8 bytes
per message, then the user-message bytes a ``--turns``-turn group conversation sends in all
(every request re-sends every earlier user message).
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

from clawbot import InboundMessage
from clawbot.agent.inbound import render_current, render_history
from clawbot.agent.user_turns import session_message, user_message

ROOT = Path(__file__).resolve().parent.parent
AT = datetime(2026, 6, 15, 14, 31, tzinfo=UTC)
ZONE = ZoneInfo("Europe/Berlin")
MESSAGES = {
    "terminal DM from the owner": InboundMessage(
        channel="terminal",
        peer_id="local",
        text="What is on my calendar tomorrow?",
        sender_id="local",
        sender_name="you",
        message_id="17",
        timestamp=AT,
        from_owner=True,
    ),
    "Telegram-like DM (not the owner)": InboundMessage(
        channel="telegram",
        peer_id="5544332211",
        text="Hi, is Anna around this week?",
        sender_id="5544332211",
        sender_name="Jonas Weber",
        message_id="8812",
        timestamp=AT,
    ),
    "group message, mention + reply": InboundMessage(
        channel="telegram",
        peer_id="-1001234567890",
        chat_type="group",
        text="@clawbot can you summarise the thread above?",
        sender_id="99887766",
        sender_name="Mia Chen",
        message_id="4410",
        reply_to_id="4402",
        thread_id="12",
        mentioned=True,
        timestamp=AT,
    ),
    "system event": InboundMessage(
        channel="terminal",
        peer_id="local",
        text="exec 7 finished (background command): exit code 0.",
        system_event=True,
        timestamp=AT,
        from_owner=True,
    ),
}
SESSION_TEXT = "Please summarise today's open tasks."


def _old_renderer(revision: str):
    source = subprocess.run(["git", "show", f"{revision}:kernel/clawbot/agent/inbound.py"], cwd=ROOT, check=True, capture_output=True, text=True).stdout
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "inbound_before.py"
        path.write_text(source, encoding="utf-8")
        spec = importlib.util.spec_from_file_location("inbound_before", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    return module


def _size(text: str) -> int:
    return len(text.encode("utf-8"))


def rows(old) -> list[tuple[str, int, int, int, int]]:
    out = []
    for kind, origin in MESSAGES.items():
        before = old.render_user_message(origin.text, origin, zone=ZONE)
        stored = user_message(origin.text, origin, zone=ZONE)
        newest, older = render_current(stored.text, stored.meta), render_history(stored.text, stored.meta)
        out.append((kind, _size(origin.text), _size(before), _size(newest), _size(older)))
    before = old.render_session_message(SESSION_TEXT, from_session="agent:main:main", from_agent="main")
    stored = session_message(SESSION_TEXT, from_session="agent:main:main", from_agent="main")
    newest, older = render_current(stored.text, stored.meta), render_history(stored.text, stored.meta)
    out.append(("session message (sessions_send)", _size(SESSION_TEXT), _size(before), _size(newest), _size(older)))
    return out


def conversation(old, turns: int) -> tuple[int, int]:
    """User-message bytes sent over ``turns`` group turns: each request carries every user message so far."""
    origin = MESSAGES["group message, mention + reply"]
    before_total = after_total = 0
    before_each, after_older = [], []
    for turn in range(turns):
        said = f"{origin.text} (turn {turn})"
        stored = user_message(said, origin, zone=ZONE)
        newest_after = _size(render_current(stored.text, stored.meta))
        before_each.append(_size(old.render_user_message(said, origin, zone=ZONE)))
        before_total += sum(before_each)
        after_total += sum(after_older) + newest_after
        after_older.append(_size(render_history(stored.text, stored.meta)))
    return before_total, after_total


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", default="0ca091a", help="git revision whose renderer is 'before' (default: %(default)s)")
    parser.add_argument("--turns", type=int, default=20)
    args = parser.parse_args(argv)
    old = _old_renderer(args.before)
    print(f"inbound message bytes (UTF-8), before = {args.before}, after = working tree, {datetime.now():%Y-%m-%d}")
    print()
    print("| message | text | before: newest | before: each later turn | after: newest | after: each later turn |")
    print("|---|---:|---:|---:|---:|---:|")
    for kind, text, before, newest, older in rows(old):
        print(f"| {kind} | {text} | {before} | {before} | {newest} | {older} |")
    before_total, after_total = conversation(old, args.turns)
    print()
    print(
        f"{args.turns}-turn group conversation, user-message bytes sent over all requests: "
        f"before {before_total:,}, after {after_total:,} ({before_total / after_total:.1f}x fewer)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
