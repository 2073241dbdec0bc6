"""Work the gateway runs beside its channels while it runs: plugins' services and its own.

Plugins offer :class:`~clawbot.types.Service` objects (``clawbot_services``); the kernel's own
background work (the heartbeat, the cron scheduler, until they move behind that hook) is a
:class:`BackgroundService` handed to the gateway by ``clawbot run``. Both are started once
the channels are, kept running by the one supervisor channels have
(:func:`~clawbot.gateway.supervisor.supervise_service`: restarted with backoff when they
raise, never taking the channels down) and cancelled when the gateway stops.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Protocol

import attrs

from clawbot.gateway.health import ChannelBoard, ServiceReport, error_line
from clawbot.gateway.supervisor import supervise_service
from clawbot.kernel import Kernel
from clawbot.types import AgentHost, Service, ServiceHealth

if TYPE_CHECKING:
    from clawbot.gateway.runner import Gateway

log = logging.getLogger("clawbot.gateway.runner")  # one logger name for the gateway's records


class BackgroundService(Protocol):
    async def serve(self, gateway: Any) -> None:
        """Run until cancelled (the gateway stopping); ``gateway`` is the running Gateway."""


def work_name(work: BackgroundService) -> str:
    """What ``clawbot status`` calls the kernel's own work: ``HeartbeatService`` is ``heartbeat``."""
    return type(work).__name__.removesuffix("Service").lower() or type(work).__name__


@attrs.define
class ServiceSupervision:
    """The background services of one gateway run: started, supervised, reported."""

    kernel: Kernel
    board: ChannelBoard = attrs.field(factory=ChannelBoard)
    _running: dict[str, Service] = attrs.field(factory=dict)

    def start(self, gateway: Gateway, own: Iterable[BackgroundService], host: AgentHost | None) -> list[asyncio.Task[None]]:
        """clawbot's ``own`` work, then every plugin's service, each in a supervised task. The
        plugins' get ``host``: a gateway that answers with a plain responder (no agents,
        ``host`` is ``None``) runs none of them."""
        started = []
        for work in own:
            name = work_name(work)
            started.append(asyncio.create_task(supervise_service(gateway, name, functools.partial(work.serve, gateway), self.board), name=f"service:{name}"))
        services = self.kernel.services
        if host is None:
            if len(services):
                log.warning("the plugins' services (%s) do not run: this gateway answers without agents", ", ".join(services.names()))
            return started
        for service in services:  # in the order the plugins offer them (status lists them so)
            name = service.name
            self._running[name] = service
            started.append(asyncio.create_task(supervise_service(gateway, name, functools.partial(service.run, host), self.board), name=f"service:{name}"))
        return started

    def report(self) -> list[ServiceReport]:
        """Each service's supervision record with what it says of itself; a service whose
        ``health()`` raises is reported as ``unknown`` with the error."""
        reports = []
        for entry in self.board.snapshot():
            service = self._running.get(entry.name)
            try:
                said = service.health() if service is not None else ServiceHealth()
            except Exception as exc:
                said = ServiceHealth("unknown", f"its health check failed: {error_line(exc)}")
            if not isinstance(said, ServiceHealth):
                said = ServiceHealth("unknown", f"its health check returned {type(said).__name__}, not a ServiceHealth")
            plugin = self.kernel.services.plugin_of(entry.name) if service is not None else None
            reports.append(ServiceReport(entry.name, entry.state, entry.restarts, entry.last_error, entry.since, said.state, said.detail, plugin))
        return reports
