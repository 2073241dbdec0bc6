"""How each channel and background service of a running gateway is doing, for ``clawbot status``.

The gateway's supervisor records every change (:class:`ChannelBoard`; one for the channels,
one for the services); :meth:`Gateway.health` and :meth:`Gateway.service_health` hand out a
snapshot. ``state`` (a service's too: its ``run`` is its start):

* ``starting``: its ``start`` was called; ``running`` once it is up (what the supervisor can
  see: the start did not fail at once);
* ``restarting``: it failed and waits for its next start (``restarts`` counts them);
* ``stopped``: it finished (end of input, clawbot stopping) or cannot run here
  (:meth:`Channel.available` said why: the reason is ``last_error``);
* ``failed``: it failed and clawbot stopped before it could start again.

``last_error`` is one line, the exception's type and message, never a traceback (those are
in the log); ``since`` is when the channel entered its state (a Unix timestamp).
"""

from __future__ import annotations

import time
from typing import Literal

import attrs

ChannelState = Literal["starting", "running", "restarting", "stopped", "failed", "done"]
"""``done``: a service whose ``run`` returned on its own: its work is finished, nothing failed."""

_MAX_ERROR = 300


@attrs.frozen
class ChannelHealth:
    name: str
    state: ChannelState
    restarts: int = 0
    last_error: str | None = None
    since: float = 0.0


@attrs.frozen
class ServiceReport:
    """A background service's supervision record (as a channel's) and what the service says
    of itself (:meth:`~clawbot.types.Service.health`: ``health`` one word, ``detail`` a line);
    ``plugin``: the plugin that offers it (``None``: clawbot's own)."""

    name: str
    state: ChannelState
    restarts: int = 0
    last_error: str | None = None
    since: float = 0.0
    health: str = "ok"
    detail: str = ""
    plugin: str | None = None


def error_line(exc: BaseException) -> str:
    """``exc`` on one short line: its type and message (a message may hold line breaks)."""
    text = " ".join(str(exc).split())
    line = f"{type(exc).__name__}: {text}" if text else type(exc).__name__
    return line if len(line) <= _MAX_ERROR else line[: _MAX_ERROR - 1] + "…"


@attrs.define
class ChannelBoard:
    """The supervisor's record of its channels, in the order they were started."""

    _entries: dict[str, ChannelHealth] = attrs.field(factory=dict)

    def set(self, name: str, state: ChannelState, *, error: str | None = None, restarted: bool = False) -> None:
        old = self._entries.get(name)
        restarts = (old.restarts if old else 0) + (1 if restarted else 0)
        last_error = error if error is not None else (old.last_error if old else None)
        self._entries[name] = ChannelHealth(name, state, restarts, last_error, time.time())

    def snapshot(self) -> list[ChannelHealth]:
        return list(self._entries.values())
