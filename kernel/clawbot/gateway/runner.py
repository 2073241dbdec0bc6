"""The gateway: runs the enabled channels and answers what they receive.

Each channel runs in its own task under a supervisor: a channel that raises is restarted
with exponential backoff (reset after a run longer than ``healthy_run`` seconds), one that
returns (e.g. end of terminal input) is done, and one that cannot run here
(:meth:`Channel.available`) is not started. What each is doing, :meth:`Gateway.health` says
(:mod:`clawbot.gateway.health`). One failing message or channel never stops the others; the
gateway stops when every channel is done, on :meth:`Gateway.stop`, or when a channel's user
asks to quit (``sink.quit()``). The answering itself is a ``Responder``: ``clawbot run``
passes one that runs the agent loop (:class:`clawbot.agent.conversation.Conversation`) for
the message's session, and tests pass plain functions. Every message first passes the
channel's access rules (:mod:`clawbot.gateway.access`: a stranger gets at most a pairing
code) and is routed to its agent and session by ``[[bindings]]``
(:mod:`clawbot.gateway.routing`). Turns run in their session's lane
(:mod:`clawbot.gateway.lanes`): one at a time per session, ``gateway.max_concurrent`` at
once in all, messages that arrive meanwhile queued. Slash commands are answered outside the
lanes, by the dispatcher ``clawbot agent -m`` uses too
(:mod:`clawbot.gateway.command_dispatch`), so ``/stop`` and ``/approve`` work while a turn
runs. On stop, running turns get ``gateway.shutdown_grace_s`` to finish before they are
cancelled (and recorded as interrupted); then the channels stop. A message accepted from a
channel that can reach its chat later waits on disk until it is answered
(:mod:`clawbot.gateway.inbox`): after a crash the next run answers it, or tells its sender
when its turn had started.

Everything handed to a channel leaves through one place, the gateway's
:class:`~clawbot.gateway.outbox.Outbox` (notices set by the kernel alone, the notice mark
broken up elsewhere, replies read for their directives and cut to the channel's length;
clawbot stopping before it answered a message tells its sender). A channel that shows turns
live (:meth:`Channel.live`) gets their text and tool calls as they happen, made safe the
same way (:mod:`clawbot.gateway.live`), and the final reply marked ``streamed``. Ctrl-C in
the terminal reaches the channels as :meth:`Gateway.interrupt`.

With an :class:`~clawbot.agent.runtime.AgentRuntime` the gateway is also the runtime's
:class:`~clawbot.agent.services.GatewayPort` while it runs: tools send messages through its
channels and queue system events (an approved command finished) that it answers like
messages, in the session that asked. Once up it starts the active memory provider for every
agent, in the background (:func:`clawbot.agent.memory.start_memory`).
"""

from __future__ import annotations

import asyncio
import collections
import logging
import time
from collections.abc import Awaitable, Callable, Coroutine
from typing import TYPE_CHECKING, Any

import attrs

from clawbot.agent.notices import outgoing_text, quoted
from clawbot.agent.owners import is_owner, owner_ids_for
from clawbot.gateway.access import Access
from clawbot.gateway.background import BackgroundService, ServiceSupervision
from clawbot.gateway.command_dispatch import ACTS_AT_ONCE, CommandReply, answer_command, command_of
from clawbot.gateway.commands import ParsedCommand, shadowed_commands
from clawbot.gateway.control_port import GatewayControlPort
from clawbot.gateway.health import ChannelBoard, ChannelHealth, ServiceReport
from clawbot.gateway.inbox import Inbox, Pending, inbox_key
from clawbot.gateway.lanes import Lanes, Waiting
from clawbot.gateway.last_chats import LastChats
from clawbot.gateway.live import live_turn, responder_takes
from clawbot.gateway.outbox import Outbox
from clawbot.gateway.routing import Route, Router
from clawbot.gateway.supervisor import supervise
from clawbot.gateway.typing_indicator import typing_while
from clawbot.kernel import Kernel
from clawbot.log_marks import FILE_ONLY
from clawbot.sessions.store import agent_of
from clawbot.types import (
    Channel,
    GatewayControl,
    GatewayEvent,
    InboundEvent,
    InboundMessage,
    OutboundMessage,
    RunKind,
)

if TYPE_CHECKING:
    from clawbot.agent.runtime import AgentRuntime

log = logging.getLogger(__name__)

Responder = Callable[[InboundMessage, str], Awaitable[str | None]]
"""(message, session key) -> reply text, or None for no reply. A responder that also takes a
``live`` keyword (a :class:`~clawbot.gateway.live.LiveTurn`) reports the turn's text and
tool calls to it, for channels that show them as they happen."""

FAILURE_REPLY = "Sorry, something went wrong while answering. Please try again."
STOPPING_NOTICE = "clawbot is stopping and did not answer this message; send it again once clawbot is back."
#: how long the senders clawbot could not answer are given to hear so, before channels stop
TELL_BEFORE_STOP_S = 3.0
DROPPED_NOTICE = "Too many messages were waiting for an answer here: this one was dropped unanswered."
#: how many replies with nowhere to go ``clawbot status`` can show
UNDELIVERED_KEPT = 20
INTERRUPTED_NOTICE = "clawbot stopped unexpectedly while answering this message and did not finish; send it again if you still need an answer."


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
    """The default agent: it answers what no ``[[bindings]]`` entry routes elsewhere."""
    restart_delays: tuple[float, ...] = (1.0, 2.0, 5.0, 15.0, 30.0)
    healthy_run: float = 60.0
    """A start that ran at least this long (seconds) before failing resets the backoff."""
    runtime: AgentRuntime | None = None
    up_after: float = 0.5
    """A start still going after this long (seconds) counts as running, for :meth:`health`."""
    access: Access = attrs.field(default=attrs.Factory(lambda self: Access(self.kernel), takes_self=True))
    router: Router = attrs.field(default=attrs.Factory(lambda self: Router.for_config(self.kernel.config, self.agent_id), takes_self=True))
    _stop: asyncio.Event = attrs.field(factory=asyncio.Event)
    _grace: bool = True
    _lanes: Lanes | None = None
    _board: ChannelBoard = attrs.field(factory=ChannelBoard)
    _background: set[asyncio.Task[None]] = attrs.field(factory=set)
    _telling: set[asyncio.Task[None]] = attrs.field(factory=set)
    outbox: Outbox = attrs.field(default=attrs.Factory(lambda self: Outbox(self.kernel, self.agent_id), takes_self=True))
    _channels: dict[str, Channel] = attrs.field(factory=dict)
    last_chats: LastChats = attrs.field(default=attrs.Factory(lambda self: LastChats(self.kernel.paths.root / "gateway" / "last-chats.json"), takes_self=True))
    """The chat a person last wrote to each session from, kept across restarts (:mod:`clawbot.gateway.last_chats`)."""
    undelivered: collections.deque[dict[str, Any]] = attrs.field(factory=lambda: collections.deque(maxlen=UNDELIVERED_KEPT))
    """The latest replies clawbot had nowhere to send (``clawbot status`` shows them)."""
    services: list[BackgroundService] = attrs.field(factory=list)
    """clawbot's own work beside the channels (heartbeats, cron), stopped with the gateway;
    the plugins' services (``clawbot_services``) run beside it (:mod:`clawbot.gateway.background`)."""
    _supervised: ServiceSupervision = attrs.field(default=attrs.Factory(lambda self: ServiceSupervision(self.kernel), takes_self=True))
    inbox: Inbox = attrs.field(default=attrs.Factory(lambda self: Inbox(self.kernel.paths.root / "inbox"), takes_self=True))
    """Where accepted messages wait, on disk, until they are answered (:mod:`clawbot.gateway.inbox`)."""
    _left_over: dict[str, list[Pending]] = attrs.field(factory=dict)
    """What the last run accepted and did not answer, by channel, until the channel is up."""

    @property
    def lanes(self) -> Lanes:
        """The sessions' lanes, set up from ``[gateway]`` on first use."""
        if self._lanes is None:
            config = self.kernel.config.gateway
            self._lanes = Lanes(
                self._turn,
                self._dropped,
                on_unanswered=self._unanswered,
                max_concurrent=config.max_concurrent,
                mode=config.queue.mode,
                debounce_s=config.queue.debounce_ms / 1000,
                cap=config.queue.cap,
            )
        return self._lanes

    def health(self) -> list[ChannelHealth]:
        """Each channel's state, restarts, last error and since when (``clawbot status``)."""
        return self._board.snapshot()

    def service_health(self) -> list[ServiceReport]:
        """Each background service's state, restarts, last error and its own word on how it
        is doing (``clawbot status``)."""
        return self._supervised.report()

    async def run(self, channels: list[Channel] | None = None) -> None:
        """Run until every channel has finished or :meth:`stop` is called."""
        channels = enabled_channels(self.kernel) if channels is None else channels
        names = tuple(c.name for c in channels)
        self._channels = {c.name: c for c in channels}
        for problem in shadowed_commands(self.kernel.chat_commands):
            log.warning("%s", problem)
        if self.runtime is not None:
            self.runtime.port = self
        # at once, before the channels start: nothing new is mistaken for left over
        self.inbox.prune()
        for left in self.inbox.pending():
            self._left_over.setdefault(left.message.channel, []).append(left)
        tasks = [asyncio.create_task(supervise(self, c, self._board), name=f"channel:{c.name}") for c in channels]
        await self.kernel.plugins.notify("clawbot_gateway_start", event=GatewayEvent(names, self.kernel.settings, plugin_states=self.kernel.plugin_states))
        from clawbot.agent.memory import start_memory

        # in the background: a first sync of a large memory must not hold up the channels
        memory = asyncio.create_task(start_memory(self.kernel), name="memory-start")
        services = self._supervised.start(self, self.services, self.runtime.services.host if self.runtime is not None else None)
        stopper = asyncio.create_task(self._stop.wait())
        try:
            pending: set[asyncio.Task[Any]] = set(tasks)  # the channels, and the stopper while waiting
            while pending and not self._stop.is_set():
                done, pending = await asyncio.wait(pending | {stopper}, return_when=asyncio.FIRST_COMPLETED)
                pending.discard(stopper)
        finally:
            self._stop.set()  # from here on nothing new is answered
            # running turns may finish (and their replies go out) before the channels stop
            await self.lanes.close(self.kernel.config.gateway.shutdown_grace_s if self._grace else 0.0)
            if self._telling:  # those clawbot did not answer hear so before the channels stop
                await asyncio.wait(list(self._telling), timeout=TELL_BEFORE_STOP_S)
            if self.runtime is not None and self.runtime.port is self:
                self.runtime.port = None
            await self.kernel.plugins.notify("clawbot_gateway_stop", event=GatewayEvent(names, self.kernel.settings, plugin_states=self.kernel.plugin_states))
            for channel in channels:
                try:
                    await channel.stop()
                except Exception:
                    log.exception("channel %s failed to stop", channel.name)
            for task in [*tasks, stopper, memory, *services, *self._background]:
                task.cancel()
            await asyncio.gather(*tasks, stopper, memory, *services, *self._background, return_exceptions=True)

    def stop(self, *, at_once: bool = False) -> None:
        """Stop: running turns get ``gateway.shutdown_grace_s`` to finish (none ``at_once``:
        the user asked to quit now), then are cancelled; then the channels stop."""
        if at_once:
            self._grace = False
        self._stop.set()

    @property
    def stopping(self) -> bool:
        return self._stop.is_set()

    def control(self) -> GatewayControl:
        """This gateway as a control surface: what a channel serving its owner may ask of it."""
        return GatewayControlPort(self)

    async def stop_requested(self) -> None:
        await self._stop.wait()

    def route_of(self, channel: Channel, message: InboundMessage) -> Route:
        """The agent and session ``message`` goes to (:mod:`clawbot.gateway.routing`); it
        belongs to the channel it came in on, whatever it says."""
        return self.router.route(attrs.evolve(message, channel=channel.name))

    def session_of(self, channel: Channel, message: InboundMessage) -> str:
        return self.route_of(channel, message).session_key

    def turn_running(self, session_key: str) -> bool:
        """Whether a turn runs (or waits to) in ``session_key`` (whatever started it)."""
        return self.lanes.busy(session_key)

    def running_sessions(self) -> list[str]:
        """The sessions a turn runs in now (``clawbot status``)."""
        return sorted(self.lanes.sessions())

    def approvals_waiting(self, session_key: str) -> frozenset[str]:
        """The ids of the approvals still waiting for an answer in ``session_key``."""
        if self.runtime is None:
            return frozenset()
        return frozenset(ticket.id for ticket in self.runtime.approvals.pending_for(session_key))

    async def accept(self, channel: Channel, message: InboundMessage, session_key: str | None = None) -> asyncio.Future[None]:
        """Queue ``message`` in its session's lane; slash commands are answered at once. The
        future is done once it was answered (or dropped, or clawbot stopped). ``session_key``:
        the session a client named itself (the control API's owner may pick any)."""
        if message.channel != channel.name:  # a message belongs to the channel it came in on, whatever it says
            message = attrs.evolve(message, channel=channel.name)
        command = command_of(self.kernel, message.text)
        route = self.route_of(channel, message)
        session_key = session_key or route.session_key
        verdict = self.access.admit(channel, message, command=command is not None)
        if not verdict.admitted:  # before commands and the agent: a stranger gets at most a pairing code
            log.info("message on %s from %s not admitted: %s", channel.name, message.sender_id or message.peer_id, verdict.why)
            return asyncio.create_task(self._turn_away(channel, message, session_key, verdict.reply))
        log.debug("message on %s routed to agent %s", channel.name, route.describe())
        if command is None:
            return await self._keep_and_answer(channel, message, session_key)
        if command.name not in ACTS_AT_ONCE:  # answered beside a running turn: /status works while one runs
            return asyncio.create_task(self._command(channel, message, session_key, command))
        # /stop and /new act before the next message is read, so that one lands in the new session
        reply = await answer_command(self.kernel, self.runtime, message, session_key, command, self)
        sent = asyncio.create_task(self._reply(channel, message, session_key, reply))
        if reply.follow_up is None:
            return sent
        await sent  # the confirmation comes before the answer to the first message
        return self._start_answer(channel, attrs.evolve(message, text=reply.follow_up), session_key)

    async def _turn_away(self, channel: Channel, message: InboundMessage, session_key: str, reply: str | None) -> None:
        if reply:
            await self.outbox.send(channel, message, session_key, reply, notice=True)

    async def _command(self, channel: Channel, message: InboundMessage, session_key: str, command: ParsedCommand) -> None:
        reply = await answer_command(self.kernel, self.runtime, message, session_key, command, self)
        await self._reply(channel, message, session_key, reply)
        if reply.follow_up is not None:
            self._start_answer(channel, attrs.evolve(message, text=reply.follow_up), session_key)

    async def _reply(self, channel: Channel, message: InboundMessage, session_key: str, reply: CommandReply) -> None:
        if reply.text:
            await self.outbox.send(channel, message, session_key, reply.text, notice=reply.notice)
        if reply.then is not None:
            reply.then()

    def _start_answer(self, channel: Channel, message: InboundMessage, session_key: str) -> asyncio.Future[None]:
        return self.lanes.submit(session_key, channel, message)

    async def _keep_and_answer(self, channel: Channel, message: InboundMessage, session_key: str) -> asyncio.Future[None]:
        """Queue a person's ``message`` once it is on disk, so a crash cannot lose it
        (:mod:`clawbot.gateway.inbox`); a message delivered again is answered once. Only for
        channels that can reach a chat later: the others' senders wait on an open request
        that a crash ends, and learn it so."""
        if not channel.capabilities.unprompted or message.system_event:
            return self._start_answer(channel, message, session_key)
        key = inbox_key(channel.name, message)
        if message.message_id is not None and await asyncio.to_thread(self.inbox.seen, key):
            log.info("message %s on %s arrived again: it is answered once", message.message_id, channel.name)
            again: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            again.set_result(None)
            return again
        try:
            await asyncio.to_thread(self.inbox.add, key, message, session_key)
        except OSError as exc:
            log.warning("a message on %s is answered but not kept on disk (%s): a crash now would lose it", channel.name, exc)
            return self._start_answer(channel, message, session_key)
        return self._answer_kept(channel, message, session_key, key)

    def _answer_kept(self, channel: Channel, message: InboundMessage, session_key: str, key: str) -> asyncio.Future[None]:
        answered = self.lanes.submit(session_key, channel, message, kept=key)
        answered.add_done_callback(lambda _: self._forget_kept(key))
        return answered

    def _forget_kept(self, key: str) -> None:
        """The message was answered (or dropped, or its sender told): a restart leaves it be."""
        try:
            self.inbox.finish(key)
        except OSError as exc:
            log.warning("the inbox could not record an answered message (%s): a restart may tell its sender again", exc)

    def catch_up(self, channel: Channel) -> None:
        """Once per run, when ``channel`` is up: what the last run accepted on it and did not
        answer is answered now, or, when its turn had started, its sender told."""
        left_over = self._left_over.pop(channel.name, [])
        if not left_over:
            return
        task = asyncio.create_task(self._replay(channel, left_over), name=f"inbox:{channel.name}")
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def _replay(self, channel: Channel, left_over: list[Pending]) -> None:
        for pending in left_over:
            if self.stopping:
                return
            try:
                await self._replay_one(channel, pending)
            except Exception:
                log.exception("a message on %s kept from before a crash could not be handled", channel.name)

    async def _replay_one(self, channel: Channel, pending: Pending) -> None:
        message, session_key = pending.message, pending.session_key
        if pending.started:  # the model may have acted on it already: never twice, the sender hears instead
            log.warning("clawbot stopped unexpectedly while answering a message on %s: its sender is told", channel.name)
            await self.outbox.send(channel, message, session_key, INTERRUPTED_NOTICE, notice=True)
            await asyncio.to_thread(self._forget_kept, pending.key)
            return
        if not self.access.admit(channel, message, command=False, ask=False).admitted:  # access changed meanwhile
            log.info("a message on %s kept from before a crash is no longer admitted: not answered", channel.name)
            await asyncio.to_thread(self._forget_kept, pending.key)
            return
        log.info("answering a message on %s that arrived before clawbot stopped unexpectedly", channel.name)
        self._answer_kept(channel, message, session_key, pending.key)

    async def stop_turns(self, session_key: str) -> tuple[int, int]:
        """Cancel the session's running turn and drop its waiting messages: (turns stopped,
        queued messages dropped)."""
        return await self.lanes.stop(session_key)

    async def _turn(self, session_key: str, batch: tuple[Waiting, ...]) -> None:
        """One turn of a lane: the last message is its origin, the others came before it."""
        last = batch[-1]
        for waiting in batch:
            if waiting.kept is not None:  # from here on a crash may leave side effects: not run again
                await asyncio.to_thread(self._started, waiting.kept, waiting.message, session_key)
        if last.channel is None:  # only a plugin's turn has none, and the lane runs that itself
            return
        await self.handle(last.channel, last.message, session_key, earlier=tuple(w.message for w in batch[:-1]), kind=last.kind, model=last.model)

    def _started(self, key: str, message: InboundMessage, session_key: str) -> None:
        try:
            self.inbox.start(key, message, session_key)
        except OSError as exc:
            log.warning("the inbox could not record a turn's start (%s): a crash now would answer its message again", exc)

    def _unanswered(self, waiting: Waiting) -> None:
        """clawbot stopped before answering: the sender is told, before the channels stop."""
        self._tell(waiting, STOPPING_NOTICE, self._telling)

    def _dropped(self, waiting: Waiting) -> None:
        """Too many messages waited: the dropped one's sender is told."""
        log.info("a waiting message on %s was dropped: more than gateway.queue.cap waited", waiting.message.channel)
        self._tell(waiting, DROPPED_NOTICE, self._background)

    def _tell(self, waiting: Waiting, notice: str, tasks: set[asyncio.Task[None]]) -> None:
        """clawbot's ``notice`` to the sender of a message it did not answer (not to itself;
        nor to a surface that answers only open requests: the request itself ends saying why,
        :meth:`Lanes.why_unanswered`)."""
        if waiting.channel is None or waiting.message.system_event or not waiting.channel.capabilities.unprompted:
            return
        session_key = self.session_of(waiting.channel, waiting.message)
        told = asyncio.create_task(self.outbox.send(waiting.channel, waiting.message, session_key, notice, notice=True))
        tasks.add(told)
        told.add_done_callback(tasks.discard)

    async def handle(
        self,
        channel: Channel,
        message: InboundMessage,
        session_key: str | None = None,
        *,
        earlier: tuple[InboundMessage, ...] = (),
        kind: RunKind = "chat",
        model: str | None = None,
    ) -> None:
        """Answer one inbound message (with ``earlier`` ones of the same chat that waited
        for it: one turn answers them all); errors become a short reply, never a crash.
        ``kind`` and ``model``: a run clawbot started itself (a heartbeat) and its model."""
        if session_key is None:
            session_key = self.router.route(message).session_key
        if not message.system_event and channel.capabilities.unprompted:  # where a heartbeat's reply goes
            self.last_chats.remember(session_key, message)
        for received in (*earlier, message):
            if not received.system_event:
                event = InboundEvent(received, agent_of(session_key), session_key)
                await self.kernel.plugins.notify("clawbot_message_received", event=event)
        live = live_turn(self.kernel, channel, message, reports=responder_takes(self.respond, "live"), heartbeat=kind == "heartbeat")
        extra: dict[str, Any] = {} if live is None else {"live": live}
        if earlier and responder_takes(self.respond, "earlier"):
            extra["earlier"] = earlier
        elif earlier:  # a responder that takes one message: the texts together, in order
            message = self._joined(earlier, message)
        if kind != "chat" and responder_takes(self.respond, "kind"):
            extra.update(kind=kind, model=model)
        async with typing_while(channel, message):
            try:
                text = await self.respond(message, session_key, **extra)
            except Exception as exc:
                # the chat gets its one line below; the traceback is for the log file
                log.exception("answering a message on %s failed", channel.name, extra=FILE_ONLY)
                if kind == "heartbeat":  # nobody asked: the failure is logged, the chat not bothered
                    if live is not None:
                        await live.finish(None)
                    return
                # a failure's message may name what someone typed (a /model choice): quoted
                failure = quoted(getattr(exc, "user_message", None) or FAILURE_REPLY)
                if live is not None:
                    await live.failed(outgoing_text(failure, notice=True))
                await self.outbox.send(channel, message, session_key, failure, notice=True)
                return
            streamed = live is not None and await live.finish(text)
            await self.outbox.send_reply(channel, message, session_key, text or "", streamed=streamed, shown=live is not None and live.showed_reply)

    def _joined(self, earlier: tuple[InboundMessage, ...], message: InboundMessage) -> InboundMessage:
        """The messages that waited and ``message`` as one, for a responder that takes one: the
        texts in order, answering ``message``, and written by the last sender who is not the
        owner when there is one, so the one turn carries the lowest trust of them all."""
        batch = (*earlier, message)
        config = self.kernel.config
        others = [m for m in batch if not is_owner(m, owner_ids_for(config, m.channel))]
        writer = others[-1] if others else message
        return attrs.evolve(
            message,
            text="\n\n".join(m.text for m in batch),
            sender_id=writer.sender_id,
            sender_name=writer.sender_name,
            from_owner=writer.from_owner,
        )

    def interrupt(self) -> bool:
        """Ctrl-C in the terminal: the channels that take it act on it (stop their turn);
        when none does, the gateway stops. Returns whether a channel took it."""
        taken = False
        for channel in self._channels.values():
            try:
                taken = channel.interrupt() or taken
            except Exception:
                log.exception("channel %s failed to take Ctrl-C", channel.name)
        if not taken:
            self.stop()
        return taken

    # -- GatewayPort: what the agents' tools may use while the gateway runs ------------------

    def channel_names(self) -> list[str]:
        return sorted(self._channels)

    async def deliver(self, message: OutboundMessage, session_key: str | None, *, notice: bool = False) -> bool:
        """Send ``message`` on its channel (``message_sending`` hooks apply); raise when the
        channel is not running, so the tool can tell the model. ``notice`` is for kernel code:
        a tool's message is never a notice, whatever it says. Whether it went out (``False``:
        a hook cancelled it)."""
        from clawbot.types import ServiceUnavailable

        channel = self._channels.get(message.channel)
        if channel is None:
            running = ", ".join(self.channel_names()) or "none"
            raise ServiceUnavailable(f"channel {message.channel!r} is not running (running: {running})")
        return await self.outbox.hand_over(channel, message, session_key, notice=notice)

    def last_chat(self, session_key: str) -> tuple[Channel, InboundMessage] | None:
        """The channel and the last message a person wrote in ``session_key``, before a
        restart too (``None``: nobody wrote there yet, or that channel is not running)."""
        message = self.last_chats.get(session_key)
        channel = self._channels.get(message.channel) if message is not None else None
        return None if channel is None or message is None else (channel, message)

    def went_nowhere(self, what: str) -> None:
        """A reply clawbot had nowhere to send: one log line, and ``clawbot status`` shows it."""
        log.warning("a reply went nowhere: %s", what)
        self.undelivered.append({"at": time.time(), "what": what})

    def run_event(self, channel: Channel, event: InboundMessage, session_key: str, *, kind: RunKind, model: str | None = None) -> asyncio.Future[None]:
        """Queue clawbot's own ``event`` (a system event) in the session's lane as a ``kind``
        run with ``model`` for that turn; its reply goes to ``channel`` as any reply would."""
        return self.lanes.submit(session_key, channel, event, kind=kind, model=model)

    def run_job(self, session_key: str, job: Callable[[], Coroutine[Any, Any, None]], *, kind: RunKind) -> asyncio.Future[None]:
        """Queue a plugin's turn (``AgentHost.run_turn``) in the session's lane: it waits for
        a running turn, status shows it, ``/stop`` cancels it."""
        return self.lanes.submit_job(session_key, job, kind=kind)

    def why_not_run(self, answered: asyncio.Future[None]) -> str | None:
        """Why the plugin's turn ``answered`` belongs to did not run (``None``: it ran)."""
        return self.lanes.why_unanswered(answered)

    def inject(self, origin: InboundMessage, session_key: str, text: str) -> None:
        self.post_event(origin, session_key, text)

    def post_event(
        self, origin: InboundMessage, session_key: str, text: str, *, kind: RunKind = "chat", model: str | None = None
    ) -> asyncio.Future[None] | None:
        """Queue clawbot's own event ``text`` in the session's lane as a ``kind`` run; the
        reply goes to ``origin``'s chat. The future is done once answered; ``None``: dropped
        (the channel is not running, or clawbot is stopping), and recorded as going nowhere."""
        channel = self._channels.get(origin.channel)
        if channel is None or self.stopping:
            self.went_nowhere(f"clawbot's own event for {session_key} was dropped: channel {origin.channel} is not running")
            return None
        event = attrs.evolve(origin, text=text, system_event=True, message_id=None, reply_to_id=None)
        return self.run_event(channel, event, session_key, kind=kind, model=model)
