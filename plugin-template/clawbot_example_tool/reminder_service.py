"""The background service that sends reminders when they are due.

This shows how a plugin adds a *service*: clawbot starts :meth:`ExampleToolReminderService.run`
once ``clawbot run``'s channels are up and cancels it when clawbot stops. If ``run`` raises,
clawbot logs it and starts it again after a pause, so a bug here never stops the chats.
``clawbot status`` shows its state and what :meth:`health` says.
"""

from __future__ import annotations

import asyncio
import logging
import time

from clawbot.statefile import locked, make_private_dir
from clawbot.types import AgentHost, OutboundMessage, Service, ServiceHealth, ServiceUnavailable

from clawbot_example_tool.reminders import load, reminders_file, save

log = logging.getLogger(__name__)


class ExampleToolReminderService(Service):
    name = "example_tool_reminders"

    def __init__(self, check_every_s: float) -> None:
        self.check_every_s = check_every_s
        self.sent = 0
        self.waiting = 0

    async def run(self, host: AgentHost) -> None:
        path = reminders_file(host.state_dir)
        make_private_dir(path.parent)
        while True:  # until clawbot stops (it cancels this task)
            await self.send_due(host, path)
            await asyncio.sleep(self.check_every_s)

    async def send_due(self, host: AgentHost, path) -> None:  # noqa: ANN001 - a Path
        with locked(path):
            reminders = load(path)
        now = time.time()
        kept = []
        for reminder in reminders:
            if reminder.get("due", 0) > now:
                kept.append(reminder)
                continue
            message = OutboundMessage(
                channel=reminder["channel"],
                peer_id=reminder["peer_id"],
                text=f"Reminder: {reminder['text']}",
                account_id=reminder.get("account_id") or "default",
                thread_id=reminder.get("thread_id"),
            )
            try:
                await host.deliver(message, reminder.get("session_key"))
                self.sent += 1
            except ServiceUnavailable as exc:  # its channel is not running (yet): try again later
                log.info("a reminder waits: %s", exc)
                kept.append(reminder)
        with locked(path):  # keep what the tool added while we were sending
            added = [r for r in load(path) if r not in reminders]
            save(path, kept + added)
        self.waiting = len(kept) + len(added)

    def health(self) -> ServiceHealth:
        return ServiceHealth("ok", f"{self.waiting} waiting, {self.sent} sent")
