"""Reminders a chat asked for: the capability the ``example_tool_remind`` tool asks for.

This shows how a plugin offers a *capability*: a class of its own (:class:`ExampleToolReminders`)
that tools ask for with ``call.services.capability(ExampleToolReminders)``. clawbot builds
one per tool call through :func:`provide_reminders`, from the call's scope (its agent,
session, the chat message that started the turn), so a tool can only set reminders for the
chat it is talking to. Another plugin's tools could ask for it the same way.

The reminders wait in a JSON file in clawbot's state folder, so they survive a restart; the
background service (:mod:`clawbot_example_tool.reminder_service`) sends them when due.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from clawbot.statefile import atomic_write_json, locked, make_private_dir, read_state
from clawbot.types import CapabilityScope, InboundMessage, ServiceUnavailable

#: the longest a reminder may wait: a week
MAX_DELAY_S = 7 * 24 * 3600


def reminders_file(state_dir: Path) -> Path:
    """Where this plugin keeps its reminders: a folder of its own in clawbot's state folder."""
    return state_dir / "plugins" / "example_tool" / "reminders.json"


def load(path: Path) -> list[dict[str, Any]]:
    """The waiting reminders (none when the file is missing or unreadable)."""
    found = read_state(path, "its reminders are not sent")
    return [r for r in found if isinstance(r, dict)] if isinstance(found, list) else []


def save(path: Path, reminders: list[dict[str, Any]]) -> None:
    atomic_write_json(path, reminders)


class ExampleToolReminders:
    """Set reminders for one chat (the one whose message started the turn)."""

    def __init__(self, path: Path, origin: InboundMessage, session_key: str) -> None:
        self.path = path
        self.origin = origin
        self.session_key = session_key

    def add(self, text: str, in_seconds: float) -> float:
        """Remember ``text`` for this chat, due in ``in_seconds``; when it is due (Unix time)."""
        due = time.time() + in_seconds
        reminder = {"due": due, "text": text, "channel": self.origin.channel, "peer_id": self.origin.peer_id}
        reminder |= {"account_id": self.origin.account_id, "thread_id": self.origin.thread_id, "session_key": self.session_key}
        make_private_dir(self.path.parent)
        with locked(self.path):  # the service may be rewriting the file right now
            save(self.path, [*load(self.path), reminder])
        return due


def provide_reminders(scope: CapabilityScope) -> ExampleToolReminders:
    """Build the capability for one tool call; refuse (with a sentence the model can act on)
    when the turn came from no chat, so there is nowhere to send the reminder."""
    if scope.origin is None:
        raise ServiceUnavailable("this turn came from no chat (a command-line run or clawbot's own event): there is nowhere to send a reminder")
    return ExampleToolReminders(reminders_file(scope.host.state_dir), scope.origin, scope.session_key)
