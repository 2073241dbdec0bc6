"""Keeping a channel or a background service running: restarts with backoff, and a record.

A channel that cannot run here (:meth:`Channel.available` gives a reason) is not started:
it is ``stopped`` with that reason, logged at info, and the other channels go on. One whose
``start`` raises is restarted after ``gateway.restart_delays`` (the backoff starts over
after a run longer than ``gateway.healthy_run``); one whose ``start`` returns is done. A
plugin's :class:`~clawbot.types.Service` is kept running the same way: its ``run`` is the
start. Every change goes on the gateway's :class:`~clawbot.gateway.health.ChannelBoard` (one
for the channels, one for the services), with the error as one line (the traceback goes to
the log only).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Protocol

from clawbot.gateway.health import ChannelBoard, ChannelState, error_line
from clawbot.gateway.sink import ChannelSink, SinkGateway
from clawbot.types import Channel

log = logging.getLogger(__name__)


class SupervisingGateway(SinkGateway, Protocol):
    """What the supervisor reads of the gateway whose channels it runs (the runner's ``Gateway``)."""

    restart_delays: tuple[float, ...]
    healthy_run: float
    up_after: float

    @property
    def stopping(self) -> bool: ...

    def catch_up(self, channel: Channel) -> None: ...

    async def stop_requested(self) -> None: ...


def unavailable(channel: Channel) -> str | None:
    """Why ``channel`` cannot run here, or ``None`` when it can."""
    try:
        return channel.available()
    except Exception as exc:  # a channel that cannot tell is tried: its start says more
        log.warning("channel %s could not tell whether it can run: %s", channel.name, error_line(exc))
        return None


def _running(gateway: SupervisingGateway, channel: Channel, board: ChannelBoard) -> None:
    """``channel`` is up: what a crash left unanswered or unannounced on it is handled now."""
    board.set(channel.name, "running")
    gateway.catch_up(channel)


async def supervise(gateway: SupervisingGateway, channel: Channel, board: ChannelBoard) -> None:
    reason = unavailable(channel)
    if reason is not None:
        log.info("channel %s does not run: %s", channel.name, reason)
        board.set(channel.name, "stopped", error=reason)
        return
    await _keep_running(
        gateway,
        f"channel {channel.name}",
        channel.name,
        lambda: channel.start(ChannelSink(gateway, channel)),
        board,
        on_up=lambda: _running(gateway, channel, board),
    )


async def supervise_service(gateway: SupervisingGateway, name: str, run: Callable[[], Awaitable[None]], board: ChannelBoard) -> None:
    """Keep the background service ``name`` running (``run`` is its whole life: a plugin's
    ``Service.run(host)``, the kernel's own ``serve(gateway)``) until the gateway stops."""
    await _keep_running(gateway, f"service {name}", name, run, board, on_up=lambda: board.set(name, "running"), finished="done")


async def _keep_running(
    gateway: SupervisingGateway,
    label: str,
    name: str,
    start: Callable[[], Awaitable[None]],
    board: ChannelBoard,
    *,
    on_up: Callable[[], None],
    finished: ChannelState = "stopped",
) -> None:
    """Call ``start`` until it returns (then its state is ``finished``) or the gateway stops,
    again after a backoff when it raises; ``on_up`` once a start has gone on for
    ``gateway.up_after`` seconds."""
    loop = asyncio.get_running_loop()
    failures = 0
    restarted = False
    last_error: str | None = None
    while not gateway.stopping:
        started = loop.time()
        board.set(name, "starting", restarted=restarted)
        up = loop.call_later(gateway.up_after, on_up)
        try:
            await start()
            up.cancel()
            board.set(name, finished)
            return
        except asyncio.CancelledError:
            up.cancel()
            board.set(name, "stopped")
            raise
        except Exception as exc:
            up.cancel()
            if loop.time() - started >= gateway.healthy_run:
                failures = 0  # it ran fine for a while: this is a fresh failure, not a crash loop
            delay = gateway.restart_delays[min(failures, len(gateway.restart_delays) - 1)]
            failures += 1
            line = error_line(exc)
            if line != last_error:
                log.exception("%s failed; restarting in %.1f s", label, delay)
            else:  # the same failure again (a port still taken): said once is enough
                log.debug("%s failed again (%s); restarting in %.1f s", label, line, delay)
            last_error = line
            board.set(name, "restarting", error=line)
            try:
                await asyncio.wait_for(gateway.stop_requested(), delay)
            except TimeoutError:
                pass
            restarted = True
    board.set(name, "failed" if restarted else "stopped")
