"""A real control API on 127.0.0.1 (a free port) in front of a real Gateway, for the tests."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

from clawbot.control.token import ensure_token
from clawbot.testing import FakeChannel, TestGateway, TestKernel
from clawbot_control.api_channel import ApiChannel
from clawbot_control.settings import ApiSettings


async def streamed_answer(message: Any, session_key: str, live: Any = None) -> str:
    """A responder that writes its reply in two pieces, as a model streams it."""
    if live is not None:
        await live.text("hel")
        await live.text("lo ")
    return f"hello {message.text}"


@contextlib.asynccontextmanager
async def serving(
    kernel: TestKernel, respond: Any = streamed_answer, *, routes: list | None = None, host: str = "127.0.0.1", explicit: bool = False
) -> AsyncIterator[ApiChannel]:
    """The gateway runs a fake chat and the API channel; yields the API once it listens."""
    async with gateway_serving(kernel, respond, routes=routes, host=host, explicit=explicit) as (_, api):
        yield api


@contextlib.asynccontextmanager
async def gateway_serving(
    kernel: TestKernel, respond: Any = streamed_answer, *, routes: list | None = None, host: str = "127.0.0.1", explicit: bool = False
) -> AsyncIterator[tuple[TestGateway, ApiChannel]]:
    """:func:`serving`, yielding the gateway too."""
    gateway = kernel.gateway(respond)
    settings = ApiSettings(host, 0, kernel.state_dir, ensure_token(kernel.state_dir), explicit)
    api = ApiChannel(settings, routes)
    run = asyncio.create_task(gateway.run([FakeChannel(), api]))
    listening = asyncio.create_task(api.listening.wait())
    await asyncio.wait({run, listening}, timeout=10, return_when=asyncio.FIRST_COMPLETED)
    assert api.listening.is_set(), "the control API did not start listening"
    try:
        yield gateway, api
    finally:
        listening.cancel()
        gateway.stop()
        await asyncio.wait_for(run, 10)


def url(api: ApiChannel, path: str) -> str:
    host, port = api.address
    return f"http://{host}:{port}{path}"


def auth(api: ApiChannel) -> dict[str, str]:
    return {"Authorization": f"Bearer {api.settings.token}"}
