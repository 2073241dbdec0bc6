"""When heartbeats run: the cadence, each agent's own, the off-switch and the active hours.

A real gateway (not serving channels) answers with a plain responder that records what it
was asked; the service is driven by :meth:`HeartbeatService.tick` at times the test picks.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from clawbot.testing import ResponderHost
from clawbot_automation.heartbeat import HeartbeatService
from clawbot_automation.heartbeat_plan import checklist_empty

START = datetime(2025, 3, 3, 9, 0, tzinfo=UTC)  # a Monday, 09:00 UTC


async def gateway_for(make_kernel, config: str, agents: tuple[str, ...] = ("main",)):
    asked: list[tuple[str, str, str | None, bool]] = []

    async def respond(message, session_key, *, kind="chat", model=None):
        asked.append((session_key, kind, model, message.system_event))
        return "HEARTBEAT_OK"

    kernel = await make_kernel(config=config)
    for agent in agents:
        workspace = kernel.settings.workspace_of(agent)
        workspace.mkdir(parents=True, exist_ok=True)
        (workspace / "HEARTBEAT.md").write_text("- look at the calendar\n")
    return kernel, ResponderHost(kernel, respond), asked


async def run_at(service, gateway, minutes: list[int], start: datetime = START) -> list[tuple[int, str, str]]:
    seen = []
    for minute in minutes:
        for beat in await service.tick(gateway, start + timedelta(minutes=minute)):
            if beat.answered is not None:
                await beat.answered
            seen.append((minute, beat.agent_id, beat.status))
    return seen


async def test_the_default_cadence_runs_at_start_and_every_30_minutes(make_kernel) -> None:
    kernel, gateway, asked = await gateway_for(make_kernel, "")
    service = HeartbeatService()
    ran = await run_at(service, gateway, list(range(0, 95, 5)))
    assert [m for m, _, status in ran if status == "ran"] == [0, 30, 60, 90]
    assert asked[0] == ("agent:main:main", "heartbeat", None, True)
    assert service.next_due() == START + timedelta(minutes=120)


async def test_a_late_tick_runs_once_and_keeps_the_cadence(make_kernel) -> None:
    kernel, gateway, _ = await gateway_for(make_kernel, "")
    service = HeartbeatService()
    ran = await run_at(service, gateway, [0, 95, 100, 120])  # asleep from 0 to 95: one run, not three
    assert ran == [(0, "main", "ran"), (95, "main", "ran"), (120, "main", "ran")]


CONFIG_AGENTS = """
[agents.defaults.heartbeat]
every_minutes = 30
model = "cheap/model"

[[agents.list]]
id = "main"
default = true

[[agents.list]]
id = "ops"
workspace = "~/ops"
heartbeat = { every_minutes = 10, model = "other/fast" }

[[agents.list]]
id = "quiet"
workspace = "~/quiet"
heartbeat = { every_minutes = 0 }
"""


async def test_an_agent_sets_its_own_cadence_and_model_and_zero_turns_it_off(make_kernel) -> None:
    kernel, gateway, asked = await gateway_for(make_kernel, CONFIG_AGENTS, ("main", "ops", "quiet"))
    service = HeartbeatService()
    ran = await run_at(service, gateway, list(range(0, 31, 5)))
    assert [m for m, agent, s in ran if agent == "main" and s == "ran"] == [0, 30]
    assert [m for m, agent, s in ran if agent == "ops" and s == "ran"] == [0, 10, 20, 30]
    assert not any(agent == "quiet" for _, agent, _ in ran)
    models = {key: model for key, _, model, _ in asked}
    assert models == {"agent:main:main": "cheap/model", "agent:ops:main": "other/fast"}


@pytest.mark.parametrize(
    ("hours", "zone", "runs_at"),
    [
        (("09:00", "17:00"), "UTC", [0, 4 * 60, 7 * 60 + 30]),  # 09:00, 13:00, 16:30 UTC
        (("22:00", "07:00"), "UTC", [13 * 60, 16 * 60, 21 * 60 + 30]),  # 22:00, 01:00, 06:30: across midnight
        # 09:00-17:00 in Tokyo (UTC+9) is 00:00-08:00 UTC: 09:00 UTC is 18:00 there
        (("09:00", "17:00"), "Asia/Tokyo", [15 * 60 + 30, 22 * 60, 22 * 60 + 30]),
    ],
    ids=["day", "across-midnight", "users-timezone"],
)
async def test_heartbeats_run_only_within_the_active_hours_on_the_users_clock(make_kernel, hours, zone, runs_at) -> None:
    start, end = hours
    config = f'\n[agents.defaults]\ntimezone = "{zone}"\n\n[agents.defaults.heartbeat]\nactive_from = "{start}"\nactive_until = "{end}"\n'
    kernel, gateway, _ = await gateway_for(make_kernel, config)
    service = HeartbeatService()
    ran = await run_at(service, gateway, list(range(0, 24 * 60, 30)))
    ran_at = [m for m, _, s in ran if s == "ran"]
    assert all(m in ran_at for m in runs_at)
    local = {m: (START + timedelta(minutes=m)).astimezone(__import__("zoneinfo").ZoneInfo(zone)).strftime("%H:%M") for m in ran_at}
    inside = (lambda t: start <= t < end) if start < end else (lambda t: t >= start or t < end)
    assert all(inside(t) for t in local.values()), local
    assert len(ran_at) == (8 if start < end else 9) * 2  # every slot inside, and only those


@pytest.mark.parametrize(
    ("text", "empty"),
    [
        ("# HEARTBEAT.md\n\n# keep it empty\n", True),
        ("<!--\n- not yet\n-->\n## Tasks\n* \n", True),
        ("- [ ]\n> \n", True),
        ("- check the inbox\n", False),
        ("# Tasks\nremind me to stretch\n", False),
        ("- [ ] call mum\n", False),
    ],
)
def test_what_counts_as_an_empty_checklist(text: str, empty: bool) -> None:
    assert checklist_empty(text) is empty
