"""The running gateway as a control surface sees it: what serving its owner takes.

A channel that serves the gateway's owner rather than a chat (the control API of the
``clawbot-control`` plugin, a dashboard) finds this on the sink its
:meth:`~clawbot.types.Channel.start` is given, as ``sink.control``. Through it the owner
sends a message to any session and learns when its turn is over, sees the approvals waiting
everywhere, the sessions, and the gateway's health. Nothing here is HTTP: the surface decides
how it is reached and who may use it (the control API: a token on loopback).
"""

from __future__ import annotations

import abc
import asyncio
import datetime
from pathlib import Path
from typing import Any

import attrs

from clawbot.types.channels import ApprovalOffer, Channel, InboundMessage
from clawbot.types.host import Service


@attrs.frozen
class TurnPreview:
    """What a client shows before a message is answered: ``command`` is ``"/name"`` when the
    text is a chat command (answered by clawbot, not the model); otherwise ``model`` is the
    model the session's next turn uses and ``line`` the line ``clawbot agent`` prints first
    (both ``None`` when the model cannot be told: the turn itself then says why)."""

    command: str | None
    model: str | None = None
    line: str | None = None


@attrs.frozen
class WaitingApproval:
    """An approval waiting for its answer in ``session_key`` (answered with ``/approve``)."""

    session_key: str
    offer: ApprovalOffer
    expires_at: datetime.datetime


class GatewayControl(abc.ABC):
    """The gateway, for the owner's control surface. Implemented by the kernel."""

    @property
    @abc.abstractmethod
    def state_dir(self) -> Path:
        """The state directory this gateway runs on."""

    @property
    @abc.abstractmethod
    def default_agent_id(self) -> str:
        """The agent that answers what no ``[[bindings]]`` entry routes elsewhere."""

    @abc.abstractmethod
    def session_key(self, name: str | None, agent_id: str | None) -> tuple[str, str]:
        """(agent id, session key) a client's ``agent`` and ``session`` name: a name of the
        agent's own (``work``) or a full key; by default the default agent's main session.
        :class:`ValueError` naming the field for an unknown agent or a malformed session."""

    @abc.abstractmethod
    async def submit(self, channel: Channel, message: InboundMessage, session_key: str) -> asyncio.Future[None]:
        """Hand ``message`` (from ``channel``) to the gateway in ``session_key``, as a chat's
        message is; the future is done once it was answered (or dropped, or stopped)."""

    @abc.abstractmethod
    def why_unanswered(self, turn: asyncio.Future[None]) -> str | None:
        """Why a submitted message got no reply (dropped past the queue's cap, stopped by
        ``/stop``, clawbot stopping), or ``None``."""

    @abc.abstractmethod
    async def preview(self, text: str, agent_id: str, session_key: str) -> TurnPreview:
        """What answering ``text`` in ``session_key`` will be: a chat command, or a model turn on which model."""

    @abc.abstractmethod
    def approvals_waiting(self, session_key: str) -> frozenset[str]:
        """The ids of the approvals still waiting for an answer in ``session_key``."""

    @abc.abstractmethod
    def waiting_approvals(self) -> list[WaitingApproval]:
        """Every approval waiting, across the sessions, by session key."""

    @abc.abstractmethod
    def quiet(self, session_key: str) -> bool:
        """Nothing of ``session_key`` runs or waits to, and no background work (an allowed
        command) is left that could report back to it."""

    @abc.abstractmethod
    def sessions(self, agent_id: str | None = None) -> list[dict[str, Any]]:
        """The session index as ``clawbot sessions list --json`` prints it (one agent's, or
        all), most recently updated first."""

    @abc.abstractmethod
    def session_totals(self, session_key: str) -> dict[str, Any] | None:
        """What ``session_key`` has used so far, or ``None`` for no such session: ``model``
        (of its last turn), ``turns``, ``usage`` (every token counter) and ``cost_usd``."""

    @abc.abstractmethod
    def health(self) -> dict[str, Any]:
        """The gateway's health as JSON: ``agent``, ``channels`` (``name``, ``state``,
        ``restarts``, ``last_error``, ``since``), ``services`` (the same, with the service's own
        ``health`` and ``detail`` and its ``plugin``), ``running_turns``, ``heartbeats`` and
        ``undelivered`` (replies that had no chat to go to)."""

    @abc.abstractmethod
    def service(self, name: str) -> Service | None:
        """The background service ``name`` the plugins added (``clawbot_services``), for a
        surface that offers what it does (the control API runs the ``cron`` service's jobs
        on request); ``None`` when no plugin offers it."""

    @abc.abstractmethod
    async def web_routes(self) -> list[tuple[str, object]]:
        """(plugin, route) of every page and socket the plugins offer (``clawbot_web_routes``),
        as they offered them: checking them (a :class:`~clawbot.types.WebPage` or
        :class:`~clawbot.types.WebSocketRoute`, its path) is the serving surface's job."""
