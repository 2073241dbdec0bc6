"""Cron runs for real: a due job runs a turn against the fake LLM server (the real OpenAI
provider) in a running gateway, and its reply reaches the fake channel's chat; a delivery that
cannot happen is a failed run; HEARTBEAT_OK is not delivered; plugins see a ``cron`` turn end;
the agent's ``cron`` tool adds and runs jobs through the CronJobs capability."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from clawbot.testing import plugin_from_hooks, running_gateway
from clawbot.testing.fake_llm import ToolCallSpec
from clawbot.types import CapabilityScope, TurnTrust
from clawbot_automation.cron_access import CronAccess, CronJobs
from clawbot_automation.records import CronJob, CronSchedule
from clawbot_automation.running import running_scheduler
from clawbot_automation.service import cron_config, cron_scheduler, cron_store

T0 = datetime(2026, 11, 26, 8, 0, tzinfo=UTC)


def config(fake: Any, workspace: Any) -> str:
    return (
        f'[agents.defaults]\nworkspace = "{workspace}"\ntimezone = "Europe/Berlin"\n\n[agents.defaults.model]\nprimary = "openai/gpt-test"\n\n'
        f'[providers.openai]\nbase_url = "{fake.base_url}/v1"\napi_key = "sk-test"\n\n[channels.terminal]\nenabled = false\n'
        "\n[cron]\nenabled = false\n"  # the test's own scheduler, on its clock, is the one the gateway's tools reach
    )


class Running:
    """A gateway serving the fake channel, and a scheduler on a clock the test moves, on its host."""

    def __init__(self, kernel: Any, channel: Any) -> None:
        self.kernel, self.channel = kernel, channel
        self.now = T0
        plugin = kernel.plugin_context("automation")
        self.cron, self.running = cron_config(plugin), running_scheduler(plugin.state)
        self._gateway = running_gateway(kernel, channel)

    async def __aenter__(self) -> Running:
        self.gateway = await self._gateway.__aenter__()
        self.host = self.gateway.host
        self.scheduler = cron_scheduler(self.host, self.cron)
        self.scheduler.clock = lambda: self.now
        self.running.started(self.scheduler)
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.scheduler.aclose()
        await self._gateway.__aexit__(None, None, None)
        await self.kernel.aclose()

    def cron_jobs_of(self, session_key: str) -> CronJobs:
        """The cron capability as a tool call of the owner's turn in ``session_key`` gets it."""
        return CronAccess(CapabilityScope("main", session_key, None, TurnTrust.OWNER, self.host), self.cron, self.running)

    async def due(self, job: CronJob, after: timedelta = timedelta(hours=1)) -> None:
        """Add ``job`` (hourly) and move the clock until it is due, and let it run."""
        cron_store(self.kernel.state_dir, self.cron).add(job, self.now)
        self.scheduler.load()
        self.now += after
        self.scheduler.tick()
        await self.scheduler.settle()


def hourly(name: str, deliver: str = "fake:alice", **fields: Any) -> CronJob:
    return CronJob(name, CronSchedule("every", "1h"), "Summarise my day", deliver=deliver, **fields)


@pytest.fixture
async def running(make_kernel, fake_channel, fake_llm_server, workspace):
    seen: list[Any] = []
    observer = plugin_from_hooks(clawbot_agent_end=lambda event: seen.append(event))
    kernel = await make_kernel(
        config=config(fake_llm_server, workspace), load_entrypoints=True, plugins={"fake": fake_channel.as_plugin(), "observer": observer}
    )
    async with Running(kernel, fake_channel) as gateway:
        gateway.ended = seen
        yield gateway


async def test_a_due_job_runs_a_turn_and_its_reply_reaches_the_chat(running: Running, fake_llm_server) -> None:
    fake_llm_server.reply("You have two meetings today.")
    await running.due(hourly("daily"))
    assert running.channel.texts() == ["You have two meetings today."]
    assert [m.peer_id for m in running.channel.sent] == ["alice"]
    [run] = cron_store(running.kernel.state_dir, running.cron).runs("daily")
    assert (run.status, run.delivered, run.reason, run.session_key) == ("ok", True, "schedule", "agent:main:cron:daily")
    request = fake_llm_server.requests[-1]
    assert "Summarise my day" in str(request.body)
    # plugins see the turn end as a cron run, in the job's own session
    assert [(e.kind, e.session_key, e.status) for e in running.ended] == [("cron", "agent:main:cron:daily", "ok")]


async def test_main_session_jobs_run_in_the_main_session(running: Running, fake_llm_server) -> None:
    fake_llm_server.reply("done")
    await running.due(hourly("inmain", session="main"))
    [run] = cron_store(running.kernel.state_dir, running.cron).runs("inmain")
    assert run.session_key == "agent:main:main" and run.status == "ok"


@pytest.mark.parametrize(
    ("deliver", "error"),
    [
        ("telegram:123", "delivery to telegram:123 failed: channel 'telegram' is not running (running: fake)"),
        ("fake:explode", "delivery to fake:explode failed"),
    ],
)
async def test_a_run_whose_delivery_fails_is_a_failed_run(running: Running, fake_llm_server, deliver: str, error: str) -> None:
    fake_llm_server.reply("Reminder: water the plants.")
    original = running.channel.send

    async def send(message: Any) -> str:
        if message.peer_id == "explode":
            raise ConnectionError("the network is down")
        return await original(message)

    running.channel.send = send
    await running.due(hourly("plants", deliver=deliver))
    [run] = cron_store(running.kernel.state_dir, running.cron).runs("plants")
    assert (run.status, run.delivered) == ("failed", False)
    assert run.error.startswith(error), run.error


async def test_heartbeat_ok_and_silent_replies_are_not_delivered(running: Running, fake_llm_server) -> None:
    fake_llm_server.reply("HEARTBEAT_OK")
    await running.due(hourly("quiet"))
    assert running.channel.sent == []
    [run] = cron_store(running.kernel.state_dir, running.cron).runs("quiet")
    assert (run.status, run.delivered) == ("ok", False)


async def test_a_failed_turn_is_a_failed_run(running: Running, fake_llm_server) -> None:
    fake_llm_server.fail("server_error")
    fake_llm_server.fail("server_error")
    fake_llm_server.fail("server_error")
    fake_llm_server.fail("server_error")
    await running.due(hourly("broken"))
    [run] = cron_store(running.kernel.state_dir, running.cron).runs("broken")
    assert run.status == "failed" and run.error.startswith("the turn failed")
    assert running.channel.sent == []


async def test_the_cron_tool_adds_lists_and_runs_jobs(running: Running, fake_llm_server) -> None:
    fake_llm_server.reply(
        tool_calls=[ToolCallSpec("cron", {"action": "add", "name": "tea", "every": "2h", "message": "Time for tea?", "deliver": "fake:alice"})]
    )
    fake_llm_server.reply(tool_calls=[ToolCallSpec("cron", {"action": "run", "name": "tea"})])
    fake_llm_server.reply("Yes, tea time.")  # the run's own turn
    fake_llm_server.reply(tool_calls=[ToolCallSpec("cron", {"action": "add", "name": "bad", "cron": "0 25 * * *", "message": "x"})])
    fake_llm_server.reply("Added and ran it.")
    result = await running.host.run_turn("main", "agent:main:main", "remind me about tea every two hours", kind="chat")
    assert result.text == "Added and ran it."
    [job] = cron_store(running.kernel.state_dir, running.cron).jobs()
    assert (job.name, job.schedule, job.agent_id) == ("tea", CronSchedule("every", "2h"), "main")
    assert running.scheduler.due_times() == {"tea": running.now + timedelta(hours=2)}  # the scheduler was told
    assert running.channel.texts() == ["Yes, tea time."]
    [run] = cron_store(running.kernel.state_dir, running.cron).runs("tea")
    assert (run.status, run.reason, run.delivered) == ("ok", "manual", True)
    tool_results = [str(r.body) for r in fake_llm_server.requests]
    assert any("not a valid cron expression" in body for body in tool_results)


async def test_only_the_main_session_may_use_cron_jobs(running: Running) -> None:
    from clawbot.types import ServiceUnavailable

    with pytest.raises(ServiceUnavailable, match="only the agent's main session"):
        running.cron_jobs_of("agent:main:fake:group:g1").jobs()


@pytest.mark.parametrize(
    ("session_key", "trust", "says"),
    [
        ("agent:main:fake:group:g1", TurnTrust.OWNER, "this is a group session: only the agent's main session may see or change cron jobs"),
        ("agent:main:main", TurnTrust.NON_OWNER, "this turn is not the owner's: only the owner's turns may see or change cron jobs"),
    ],
)
async def test_a_refused_cron_call_names_its_own_cause(running: Running, session_key: str, trust: TurnTrust, says: str) -> None:
    from clawbot.types import ServiceUnavailable

    access = CronAccess(CapabilityScope("main", session_key, None, trust, running.host), running.cron, running.running)
    with pytest.raises(ServiceUnavailable) as refused:
        access.jobs()
    assert str(refused.value) == says
