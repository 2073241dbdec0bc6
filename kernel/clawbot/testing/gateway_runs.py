"""Running a real gateway in a test: a plugin's channels, services and tools, end to end.

:func:`running_gateway` starts the gateway ``clawbot run`` starts (the agents answer, the
plugins' background services run beside the channels) on the channels a test gives it,
usually a :class:`~clawbot.testing.FakeChannel`, and stops it when the block ends. What a
plugin author checks goes through :class:`GatewayInTest`: the services as ``clawbot status``
reports them, and the :class:`~clawbot.types.AgentHost` they were given.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import attrs

from clawbot.agent.runtime import AgentRuntime
from clawbot.gateway.runner import Gateway
from clawbot.types import AgentHost, Channel


@attrs.frozen
class GatewayInTest:
    """A gateway running in a test (:func:`running_gateway`)."""

    _gateway: Gateway

    @property
    def host(self) -> AgentHost:
        """The host the plugins' services and capabilities are given."""
        runtime = self._gateway.runtime
        assert runtime is not None  # running_gateway always gives the gateway its agents
        return runtime.services.host

    def services(self) -> dict[str, dict[str, Any]]:
        """Each background service by name, as ``clawbot status --json`` shows it: ``state``
        (``starting``, ``running``, ``restarting``, ``stopped``, ``failed``), ``restarts``,
        ``last_error``, ``health`` and ``detail`` (what the service says), ``plugin``."""
        return {report.name: attrs.asdict(report) for report in self._gateway.service_health()}

    async def wait_for_service(self, name: str, state: str = "running", timeout: float = 30.0) -> dict[str, Any]:
        """The report of service ``name`` once it is in ``state``; ``TimeoutError`` when it
        is not within ``timeout`` seconds."""
        async with asyncio.timeout(timeout):
            while (report := self.services().get(name)) is None or report["state"] != state:
                await asyncio.sleep(0.005)
        return report


@contextlib.asynccontextmanager
async def running_gateway(kernel: Any, *channels: Channel) -> AsyncIterator[GatewayInTest]:
    """Run ``kernel``'s gateway, answered by its default agent, on ``channels``; yields once
    every channel has started, and stops the gateway (services included) at the end.
    ``kernel``: what ``make_kernel`` / ``build_kernel`` returned (a test kit's view of the
    kernel is looked through)."""
    kernel = getattr(kernel, "_kernel", kernel)  # the test kit's view holds the kernel itself
    runtime = AgentRuntime(kernel)
    gateway = Gateway(kernel, runtime.respond, kernel.config.default_agent_id(), runtime=runtime)
    run = asyncio.create_task(gateway.run(list(channels)))
    try:
        async with asyncio.timeout(30):
            while not all(health.state == "running" for health in gateway.health()) or len(gateway.health()) < len(channels):
                if run.done():
                    await run  # it ended before it was up: its error says why
                    raise RuntimeError("the gateway stopped before its channels were up")
                await asyncio.sleep(0.005)
        yield GatewayInTest(gateway)
    finally:
        gateway.stop()
        await asyncio.wait_for(run, 30)
        await runtime.aclose()
