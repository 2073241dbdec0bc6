"""The escape payloads through the real exec tool: the sandbox holds with no analysis at all.

``security = "full"`` runs every line unasked (only destructive patterns would ask), so the
sandbox alone stands between a hostile model and the user's keys, clawbot's state dir, the
files beside the workspace and the loopback listeners. The same table without a sandbox
shows the other half: in the default allowlist mode the analysis alone asks about every one
of them, and in full mode they reach their targets (which proves each line works).

Lines aimed at the process that started the command (its environment, its signals) are
run against a stand-in process in test_sandbox_escapes.py, not against this test process.
"""

from __future__ import annotations

import asyncio

import pytest

from .exec_support import Harness, text_of
from .sandbox_payloads import PAYLOADS, Payload
from .sandbox_world import PATH, Driver, Listeners, World, host_settings, missing, usable

# Lines aimed at the parent (its pid, its session keyring) need the driver as the parent
THROUGH_EXEC = tuple(p for p in PAYLOADS if not any(mark in p.line for mark in ("{parent_pid}", "$PPID", "{keyctl}")))


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory):
    base = tmp_path_factory.mktemp("exec-escapes")
    listeners = Listeners(base / "sockets")
    driver = Driver()  # only fills {parent_pid}; no line here uses it
    built = World(base, driver, listeners)
    yield built
    driver.close()
    listeners.close()
    built.cleanup()


async def run_through_exec(world: World, payload: Payload, **settings: object) -> tuple[str, str, dict]:
    """(status, output, what it reached) of ``payload`` run by the exec tool under ``settings``."""
    with host_settings(payload):
        return await _run_through_exec(world, payload, **settings)


async def _run_through_exec(world: World, payload: Payload, **settings: object) -> tuple[str, str, dict]:
    world.reset()
    before = world.snapshot()
    env = {"PATH": PATH, "HOME": str(world.home), "LANG": "C.UTF-8"}
    harness = Harness(world.ws, world.state, env, session="agent:main:escape", **settings)
    try:
        command = world.line(payload)
        if payload.shell != "/bin/sh":
            command = f"{payload.shell} -c {shell_quote(command)}"
        result = await harness.exec(command, timeout=20)
        if payload.settle_s:
            await asyncio.sleep(payload.settle_s)
    finally:
        await harness.close()
    output = text_of(result)
    return result.details.get("status", ""), output, world.evidence(before, {"output": output, "signalled": []})


def asks_in_every_mode(output: str) -> bool:
    """Destructive and privileged commands ask even in full mode."""
    return "approval" in output and ("elevated privileges" in output or "destructive pattern" in output)


def shell_quote(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


def test_the_exec_table_is_big_enough() -> None:
    assert len(THROUGH_EXEC) >= 30
    assert {p.shows for p in THROUGH_EXEC} >= {"canary", "write", "tcp", "udp", "unix"}


@pytest.mark.parametrize("mechanism", ("bwrap", "landlock"))  # the settings a user can choose
@pytest.mark.parametrize("payload", THROUGH_EXEC, ids=lambda p: p.id)
async def test_in_full_mode_the_sandbox_alone_stops_every_payload(world: World, mechanism: str, payload: Payload) -> None:
    usable(mechanism)
    status, output, reached = await run_through_exec(world, payload, security="full", sandbox=mechanism)
    assert status in ("exited", "killed", "timed-out") or asks_in_every_mode(output), (payload.id, status, output)
    assert reached == {}, f"{payload.id} ({payload.tries}) escaped exec in the {mechanism} sandbox: {reached}; output {output!r}"


@pytest.mark.parametrize("payload", THROUGH_EXEC, ids=lambda p: p.id)
async def test_without_a_sandbox_the_analysis_alone_asks_about_every_payload(world: World, payload: Payload) -> None:
    status, output, reached = await run_through_exec(world, payload, sandbox="off")
    assert status == "approval-unavailable", (payload.id, status, output)
    assert reached == {}, (payload.id, reached)


@pytest.mark.parametrize("payload", THROUGH_EXEC, ids=lambda p: p.id)
async def test_without_a_sandbox_full_mode_lets_every_payload_reach_its_target(world: World, payload: Payload) -> None:
    reason = missing(payload)
    if reason:
        pytest.skip(reason)
    status, output, reached = await run_through_exec(world, payload, security="full", sandbox="off")
    if asks_in_every_mode(output):
        assert reached == {}, (payload.id, reached)  # su & co.: full mode asks about them too
        return
    assert payload.shows in reached, f"{payload.id} ({payload.tries}) did nothing unconfined: {status} {output!r}"
