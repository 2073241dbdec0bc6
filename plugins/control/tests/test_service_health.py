"""``GET /v1/health`` (what ``clawbot status`` prints) reports the background services."""

from __future__ import annotations

import asyncio

import aiohttp
from clawbot.control.token import ensure_token
from clawbot.testing import plugin_from_hooks, running_gateway
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
    api = ApiChannel(ApiSettings("127.0.0.1", 0, kernel.state_dir, ensure_token(kernel.state_dir), False), None)
    async with running_gateway(kernel, api) as gateway:
        async with asyncio.timeout(30):
            await api.listening.wait()
        await gateway.wait_for_service("inbox_watcher")
        async with aiohttp.ClientSession() as http, http.get(url(api, "/v1/health"), headers=auth(api)) as response:
            health = await response.json()
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
