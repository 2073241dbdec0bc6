"""``GET /v1/health`` (what ``clawbot status`` prints) reports the background services."""

from __future__ import annotations

import asyncio

import aiohttp
from clawbot.agent.runtime import AgentRuntime
from clawbot.control.token import ensure_token
from clawbot.gateway.runner import Gateway
from clawbot.testing import plugin_from_hooks
from clawbot.types import AgentHost, Service, ServiceHealth
from clawbot_control.api_channel import ApiChannel
from clawbot_control.settings import ApiSettings

from .apihelpers import auth, url


class Watcher(Service):
    name = "inbox_watcher"

    async def run(self, host: AgentHost) -> None:
        await asyncio.Event().wait()

    def health(self) -> ServiceHealth:
        return ServiceHealth("idle", "3 folders watched")


async def test_health_lists_each_service_with_its_state_and_its_own_word(make_kernel) -> None:
    kernel = await make_kernel(plugins={"mail": plugin_from_hooks(clawbot_services=lambda ctx: [Watcher()])})
    runtime = AgentRuntime(kernel)
    gateway = Gateway(kernel, runtime.respond, "main", runtime=runtime)
    gateway.up_after = 0.01
    api = ApiChannel(ApiSettings("127.0.0.1", 0, kernel.paths.root, ensure_token(kernel.paths.root), False), None)
    run = asyncio.create_task(gateway.run([api]))
    try:
        async with asyncio.timeout(30):
            await api.listening.wait()
            while not any(report.state == "running" for report in gateway.service_health()):
                await asyncio.sleep(0.005)
        async with aiohttp.ClientSession() as http, http.get(url(api, "/v1/health"), headers=auth(api)) as response:
            health = await response.json()
    finally:
        gateway.stop()
        await asyncio.wait_for(run, 30)
    (service,) = health["services"]
    assert {key: service[key] for key in ("name", "state", "restarts", "last_error", "health", "detail", "plugin")} == {
        "name": "inbox_watcher",
        "state": "running",
        "restarts": 0,
        "last_error": None,
        "health": "idle",
        "detail": "3 folders watched",
        "plugin": "mail",
    }
