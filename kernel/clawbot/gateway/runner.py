"""The gateway: runs the enabled channels and answers what they receive.

Each channel runs in its own task under a supervisor: a channel that raises is restarted
with exponential backoff (reset after a run longer than ``healthy_run`` seconds), one that
returns (e.g. end of terminal input) is done. One failing message or channel never stops the
others. The answering itself is a ``Responder``: ``clawbot run`` passes one that runs the
agent loop (:class:`clawbot.agent.conversation.Conversation`) for the message's session, and
tests pass plain functions. Each answer runs in its own task, tracked per session key so
``/stop`` can cancel it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

import attrs

from clawbot.kernel import Kernel
from clawbot.sessions.keys import session_key_for
from clawbot.types import Channel, GatewayEvent, InboundEvent, InboundMessage, OutboundEvent, OutboundMessage

log = logging.getLogger(__name__)

Responder = Callable[[InboundMessage, str], Awaitable[str | None]]
"""(message, session key) -> reply text, or None for no reply."""

STOP_COMMAND = "/stop"
FAILURE_REPLY = "Sorry, something went wrong while answering. Please try again."


def enabled_channels(kernel: Kernel) -> list[Channel]:
    """Channels whose ``[channels.<name>]`` table enables them (unclaimed tables: enabled)."""
    chosen = []
    for channel in kernel.channels:
        path = f"channels.{channel.name}"
        if path not in kernel.config.owners:
            chosen.append(channel)
            continue
        section = kernel.config.section(path)
        if section is not None and getattr(section, "enabled", False):
            chosen.append(channel)
    return chosen


@attrs.define
class Gateway:
    kernel: Kernel
    respond: Responder
    agent_id: str
    restart_delays: tuple[float, ...] = (1.0, 2.0, 5.0, 15.0, 30.0)
    healthy_run: float = 60.0
    """A start that ran at least this long (seconds) before failing resets the backoff."""
    _stop: asyncio.Event = attrs.field(factory=asyncio.Event)
    _running: dict[str, set[asyncio.Task[None]]] = attrs.field(factory=dict)

    async def run(self, channels: list[Channel] | None = None) -> None:
        """Run until every channel has finished or :meth:`stop` is called."""
        channels = enabled_channels(self.kernel) if channels is None else channels
        names = tuple(c.name for c in channels)
        tasks = [asyncio.create_task(self._supervise(c), name=f"channel:{c.name}") for c in channels]
        await self.kernel.plugins.notify("clawbot_gateway_start", event=GatewayEvent(names, self.kernel.config))
        stopper = asyncio.create_task(self._stop.wait())
        try:
            pending = set(tasks)
            while pending and not self._stop.is_set():
                done, pending = await asyncio.wait(pending | {stopper}, return_when=asyncio.FIRST_COMPLETED)
                pending.discard(stopper)
        finally:
            await self.kernel.plugins.notify("clawbot_gateway_stop", event=GatewayEvent(names, self.kernel.config))
            for channel in channels:
                try:
                    await channel.stop()
                except Exception:
                    log.exception("channel %s failed to stop", channel.name)
            answers = [t for running in self._running.values() for t in running]
            for task in [*tasks, stopper, *answers]:
                task.cancel()
            await asyncio.gather(*tasks, stopper, *answers, return_exceptions=True)

    def stop(self) -> None:
        self._stop.set()

    async def _supervise(self, channel: Channel) -> None:
        loop = asyncio.get_running_loop()
        failures = 0
        while not self._stop.is_set():
            started = loop.time()
            try:
                await channel.start(lambda message: self.accept(channel, message))
                return
            except asyncio.CancelledError:
                raise
            except Exception:
                if loop.time() - started >= self.healthy_run:
                    failures = 0  # it ran fine for a while: this is a fresh failure, not a crash loop
                delay = self.restart_delays[min(failures, len(self.restart_delays) - 1)]
                failures += 1
                log.exception("channel %s failed; restarting in %.1f s", channel.name, delay)
                try:
                    await asyncio.wait_for(self._stop.wait(), delay)
                except TimeoutError:
                    pass

    async def accept(self, channel: Channel, message: InboundMessage) -> asyncio.Task[None]:
        """Start answering ``message`` in its own task; ``/stop`` cancels the session's runs."""
        session_key = session_key_for(self.agent_id, message, self.kernel.config.session.dm_scope)
        if message.text.strip().lower() == STOP_COMMAND:
            running = [t for t in self._running.get(session_key, ()) if not t.done()]
            for task in running:
                task.cancel()
            await asyncio.gather(*running, return_exceptions=True)
            notice = "Stopped." if running else "Nothing is running."
            return asyncio.create_task(self._send(channel, message, session_key, notice))
        task = asyncio.create_task(self.handle(channel, message), name=f"answer:{session_key}")
        running = self._running.setdefault(session_key, set())
        running.add(task)
        task.add_done_callback(lambda done: self._finished(session_key, running, done))
        return task

    def _finished(self, session_key: str, running: set[asyncio.Task[None]], task: asyncio.Task[None]) -> None:
        """Forget a finished answer, and the session's entry once nothing runs for it."""
        running.discard(task)
        if not running and self._running.get(session_key) is running:
            del self._running[session_key]

    async def handle(self, channel: Channel, message: InboundMessage) -> None:
        """Answer one inbound message; errors become a short reply, never a crash."""
        session_key = session_key_for(self.agent_id, message, self.kernel.config.session.dm_scope)
        await self.kernel.plugins.notify(
            "clawbot_message_received", event=InboundEvent(message, self.agent_id, session_key)
        )
        try:
            text = await self.respond(message, session_key)
        except Exception as exc:
            log.exception("answering a message on %s failed", channel.name)
            text = getattr(exc, "user_message", None) or FAILURE_REPLY
        if text:
            await self._send(channel, message, session_key, text)

    async def _send(self, channel: Channel, message: InboundMessage, session_key: str, text: str) -> None:
        outbound = OutboundMessage(
            channel=channel.name,
            peer_id=message.peer_id,
            text=text,
            account_id=message.account_id,
            reply_to_id=message.message_id,
            thread_id=message.thread_id,
        )
        final = await self.kernel.plugins.message_sending(OutboundEvent(outbound, self.agent_id, session_key))
        if final is None:
            return
        try:
            await channel.send(final)
        except Exception:
            log.exception("sending a reply on %s failed", channel.name)
