"""Plugins' background services run beside the channels while the gateway runs.

Real kernel and gateway, the fake channel, a scripted model: a service started once the
channels are, given the AgentHost (turns, delivery, system events), restarted with backoff
when it raises, cancelled on stop, and its health in the gateway's report.
"""

from __future__ import annotations

import asyncio

import pytest
from clawbot.agent.models import ModelChoice
from clawbot.agent.runtime import AgentRuntime
from clawbot.gateway.runner import Gateway
from clawbot.testing import FakeChannel, plugin_from_hooks
from clawbot.types import AgentHost, OutboundMessage, Service, ServiceHealth

from ..agent.scripted import ScriptedProvider

ALICE = "agent:main:fake:dm:alice"  # alice's direct chat on the fake channel


class Ticker(Service):
    """Counts ticks until cancelled; says how many in its health."""

    name = "ticker"

    def __init__(self) -> None:
        self.ticks = 0
        self.hosts: list[AgentHost] = []
        self.cancelled = asyncio.Event()

    async def run(self, host: AgentHost) -> None:
        self.hosts.append(host)
        try:
            while True:
                self.ticks += 1
                await asyncio.sleep(0.01)
        except asyncio.CancelledError:
            self.cancelled.set()
            raise

    def health(self) -> ServiceHealth:
        return ServiceHealth("ok", f"{self.ticks} ticks")


class Flaky(Service):
    """Fails its first runs, then stays up."""

    name = "flaky"

    def __init__(self, failures: int) -> None:
        self.failures = failures
        self.runs = 0

    async def run(self, host: AgentHost) -> None:
        self.runs += 1
        if self.runs <= self.failures:
            raise ConnectionError("feed unreachable")
        await asyncio.Event().wait()


class Announcer(Service):
    """Asks the agent for a line and delivers it to a chat, once."""

    name = "announcer"

    def __init__(self) -> None:
        self.delivered: list[bool] = []

    async def run(self, host: AgentHost) -> None:
        outcome = await host.run_turn(host.default_agent_id, "agent:main:announcements", "write the morning line", kind="cron")
        self.delivered.append(await host.deliver(OutboundMessage(channel="fake", peer_id="alice", text=outcome.text), "agent:main:announcements"))
        await asyncio.Event().wait()


class SickService(Service):
    name = "sick"

    async def run(self, host: AgentHost) -> None:
        await asyncio.Event().wait()

    def health(self) -> ServiceHealth:
        raise RuntimeError("cannot tell")


async def _until(predicate, timeout: float = 30.0) -> None:
    async with asyncio.timeout(timeout):
        while not predicate():
            await asyncio.sleep(0.005)


async def _gateway(make_kernel, *services: Service, provider: ScriptedProvider | None = None) -> tuple[Gateway, FakeChannel]:
    kernel = await make_kernel(plugins={"background": plugin_from_hooks(clawbot_services=lambda ctx: list(services))})
    runtime = AgentRuntime(kernel)
    await runtime.conversation("main", chain=[ModelChoice(provider or ScriptedProvider(), "m")])
    gateway = Gateway(kernel, runtime.respond, "main", runtime=runtime, restart_delays=(0.01, 0.02))
    gateway.up_after = 0.01
    return gateway, FakeChannel()


@pytest.mark.hook_emission("clawbot_services")
async def test_hook_services_the_gateway_runs_a_plugin_service_reports_it_and_cancels_it_on_stop(make_kernel) -> None:
    ticker = Ticker()
    gateway, channel = await _gateway(make_kernel, ticker)
    run = asyncio.create_task(gateway.run([channel]))
    await channel.wait_started()
    await _until(lambda: ticker.ticks >= 3 and any(r.state == "running" for r in gateway.service_health()))
    (report,) = gateway.service_health()
    assert (report.name, report.state, report.health, report.plugin, report.restarts) == ("ticker", "running", "ok", "background", 0)
    assert report.detail.endswith(" ticks") and report.since > 0
    (host,) = ticker.hosts
    assert host is gateway.runtime.services.host and host.gateway_running and host.channel_names() == ["fake"]
    gateway.stop()
    await run
    assert ticker.cancelled.is_set()
    assert [r.state for r in gateway.service_health()] == ["stopped"]


async def test_a_failing_service_is_restarted_and_the_chat_goes_on(make_kernel) -> None:
    flaky = Flaky(failures=2)
    gateway, channel = await _gateway(make_kernel, flaky, provider=ScriptedProvider("hello alice"))
    run = asyncio.create_task(gateway.run([channel]))
    await channel.wait_started()
    await _until(lambda: flaky.runs == 3 and gateway.service_health()[0].state == "running")
    await channel.inject("hi", peer_id="alice")
    (report,) = gateway.service_health()
    gateway.stop()
    await run
    assert channel.texts() == ["hello alice"]
    assert report.restarts == 2 and report.last_error == "ConnectionError: feed unreachable"


async def test_a_service_runs_a_turn_and_delivers_its_reply_through_the_gateway(make_kernel) -> None:
    announcer = Announcer()
    gateway, channel = await _gateway(make_kernel, announcer, provider=ScriptedProvider("good morning"))
    run = asyncio.create_task(gateway.run([channel]))
    await channel.wait_started()
    await _until(lambda: announcer.delivered == [True])
    gateway.stop()
    await run
    assert channel.texts() == ["good morning"]
    assert [m.peer_id for m in channel.sent] == ["alice"]


async def test_a_service_posts_a_system_event_answered_in_the_chat_that_last_wrote(make_kernel) -> None:
    ticker = Ticker()
    provider = ScriptedProvider("hi alice", "the backup finished, alice")
    gateway, channel = await _gateway(make_kernel, ticker, provider=provider)
    run = asyncio.create_task(gateway.run([channel]))
    await channel.wait_started()
    await channel.inject("hello", peer_id="alice")
    await _until(lambda: len(ticker.hosts) == 1)
    host = ticker.hosts[0]
    chat = host.last_chat(ALICE)
    assert chat is not None and (chat.channel, chat.peer_id) == ("fake", "alice")
    answered = await host.post_system_event(ALICE, "the nightly backup finished")
    await asyncio.wait_for(answered, 30)
    gateway.stop()
    await run
    assert channel.texts() == ["hi alice", "the backup finished, alice"]
    assert "the nightly backup finished" in provider.requests[-1].messages[-1].text


async def test_a_service_whose_health_check_raises_is_reported_unknown(make_kernel) -> None:
    gateway, channel = await _gateway(make_kernel, SickService())
    run = asyncio.create_task(gateway.run([channel]))
    await channel.wait_started()
    await _until(lambda: gateway.service_health() and gateway.service_health()[0].state == "running")
    (report,) = gateway.service_health()
    gateway.stop()
    await run
    assert (report.health, report.detail) == ("unknown", "its health check failed: RuntimeError: cannot tell")


async def test_a_gateway_without_agents_runs_no_plugin_service(make_kernel) -> None:
    ticker = Ticker()
    kernel = await make_kernel(plugins={"background": plugin_from_hooks(clawbot_services=lambda ctx: [ticker])})

    async def echo(message, session_key):
        return f"echo {message.text}"

    gateway, channel = Gateway(kernel, echo, "main"), FakeChannel()
    run = asyncio.create_task(gateway.run([channel]))
    await channel.wait_started()
    await channel.inject("hi")
    gateway.stop()
    await run
    assert ticker.hosts == [] and gateway.service_health() == []


class OneShot(Service):
    """Does its work once at start and returns (an announcement after a restart)."""

    name = "one-shot"

    async def run(self, host: AgentHost) -> None:
        await asyncio.sleep(0)


async def test_a_service_whose_run_returns_is_done_not_stopped_and_is_not_restarted(make_kernel) -> None:
    gateway, channel = await _gateway(make_kernel, OneShot())
    run = asyncio.create_task(gateway.run([channel]))
    await channel.wait_started()
    await _until(lambda: [r.state for r in gateway.service_health()] == ["done"])
    (report,) = gateway.service_health()
    assert report.restarts == 0
    gateway.stop()
    await run
    assert [r.state for r in gateway.service_health()] == ["done"]
