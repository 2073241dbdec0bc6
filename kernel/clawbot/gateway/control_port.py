"""The gateway behind :class:`~clawbot.types.GatewayControl`: what a control surface asks of it.

Handed to every channel's sink as ``sink.control``; the control API (the ``clawbot-control``
plugin) is the one that uses it. Each answer comes from the gateway's own records (its lanes,
the approval broker, the session index), so the surface never reaches into the kernel.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from clawbot.agent.approvals import offer
from clawbot.agent.startup_line import startup_line
from clawbot.config.automation_schema import heartbeat_minutes
from clawbot.gateway.command_dispatch import command_of
from clawbot.sessions.keys import main_key, resolve_session_key
from clawbot.types import Channel, GatewayControl, InboundMessage, Service, TurnPreview, WaitingApproval

if TYPE_CHECKING:
    from clawbot.gateway.runner import Gateway

log = logging.getLogger(__name__)


@attrs.frozen
class GatewayControlPort(GatewayControl):
    gateway: Gateway

    @property
    def state_dir(self) -> Path:
        return self.gateway.kernel.paths.root

    @property
    def default_agent_id(self) -> str:
        return self.gateway.kernel.config.default_agent_id()

    def session_key(self, name: str | None, agent_id: str | None) -> tuple[str, str]:
        config = self.gateway.kernel.config
        agent_id = agent_id or config.default_agent_id()
        if agent_id not in config.agent_ids():
            raise ValueError(f"unknown agent {agent_id!r}; configured: {', '.join(config.agent_ids())}")
        try:
            return agent_id, resolve_session_key(name, agent_id)
        except ValueError as exc:
            raise ValueError(f"session: {exc}") from None

    async def submit(self, channel: Channel, message: InboundMessage, session_key: str) -> asyncio.Future[None]:
        return await self.gateway.accept(channel, message, session_key=session_key)

    def why_unanswered(self, turn: asyncio.Future[None]) -> str | None:
        return self.gateway.lanes.why_unanswered(turn)

    async def preview(self, text: str, agent_id: str, session_key: str) -> TurnPreview:
        kernel, runtime = self.gateway.kernel, self.gateway.runtime
        command = command_of(kernel, text)
        if command is not None:
            return TurnPreview(f"/{command.name}")
        if runtime is None:
            return TurnPreview(None)
        try:
            conversation = await runtime.conversation(agent_id)
            info = kernel.sessions.get(session_key)
            model, chosen = conversation.models_for(info)[0], info is not None and bool(info.model_override)
        except Exception:  # the turn itself says why the model is unusable
            log.debug("no model line for %s", session_key, exc_info=True)
            return TurnPreview(None)
        return TurnPreview(None, model.ref, startup_line(kernel, agent_id, model, chosen=chosen))

    def approvals_waiting(self, session_key: str) -> frozenset[str]:
        return self.gateway.approvals_waiting(session_key)

    def waiting_approvals(self) -> list[WaitingApproval]:
        runtime = self.gateway.runtime
        if runtime is None:
            return []
        keys = {info.key for info in self.gateway.kernel.sessions.list(None)}
        keys.update(self.gateway.running_sessions())
        return [
            WaitingApproval(key, offer(ticket, request), ticket.expires_at) for key in sorted(keys) for ticket, request in runtime.approvals.requests_for(key)
        ]

    def quiet(self, session_key: str) -> bool:
        runtime = self.gateway.runtime
        background = runtime.services.background if runtime is not None else frozenset()
        return not self.gateway.turn_running(session_key) and not any(not task.done() for task in background)

    def sessions(self, agent_id: str | None = None) -> list[dict[str, Any]]:
        store = self.gateway.kernel.sessions
        return [store.converter.unstructure(info) for info in store.list(agent_id)]

    def session_totals(self, session_key: str) -> dict[str, Any] | None:
        info = self.gateway.kernel.sessions.get(session_key)
        if info is None:
            return None
        return {"model": info.model, "turns": info.turns, "usage": attrs.asdict(info.usage), "cost_usd": info.cost_usd}

    def health(self) -> dict[str, Any]:
        gateway = self.gateway
        return {
            "agent": gateway.agent_id,
            "channels": [attrs.asdict(item) for item in gateway.health()],
            # background services (plugins' and clawbot's own): supervision state and their own word
            "services": [attrs.asdict(report) for report in gateway.service_health()],
            "running_turns": gateway.running_sessions(),
            "heartbeats": heartbeat_report(gateway.kernel),
            # replies clawbot had no chat for (a heartbeat with no chat yet), newest last
            "undelivered": list(gateway.undelivered),
        }

    def service(self, name: str) -> Service | None:
        return self.gateway.kernel.services.get(name)

    async def web_routes(self) -> list[tuple[str, object]]:
        kernel = self.gateway.kernel
        contributions = await kernel.plugins.collect("clawbot_web_routes", kwargs_for=lambda plugin: {"ctx": kernel.plugin_context(plugin)})
        return [(contribution.plugin, contribution.value) for contribution in contributions]


def heartbeat_report(kernel: Any) -> list[dict[str, Any]]:
    """Each agent's heartbeat for ``clawbot status``: its cadence, and the runs and tokens
    its main session spent on heartbeats (the sessions count heartbeat turns apart)."""
    rows = []
    # the cadence is configuration; only a registered `heartbeat` service (the automation plugin's) runs it
    runs = kernel.services.get("heartbeat") is not None
    for agent_id in kernel.config.agent_ids() or [kernel.config.default_agent_id()]:
        info = kernel.sessions.get(main_key(agent_id))
        usage = info.heartbeat_usage if info is not None else None
        rows.append(
            {
                "agent": agent_id,
                "every_minutes": heartbeat_minutes(kernel.config, agent_id),
                "runs": info.heartbeats if info is not None else 0,
                "tokens": usage.prompt_tokens + usage.output_tokens if usage is not None else 0,
                **({} if runs else {"not_running": "no plugin runs heartbeats"}),
            }
        )
    return rows
