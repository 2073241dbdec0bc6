"""Every escape payload, run by a stand-in for clawbot: unconfined it reaches its target (so
the payload works), under each sandbox it reaches nothing at all."""

from __future__ import annotations

import pytest

from .sandbox_payloads import PAYLOADS, Payload
from .sandbox_world import MECHANISMS, Driver, Listeners, World, host_settings, missing, usable


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory):
    base = tmp_path_factory.mktemp("escapes")
    listeners = Listeners(base / "sockets")
    driver = Driver()
    built = World(base, driver, listeners)
    yield built
    driver.close()
    listeners.close()
    built.cleanup()


def _run(world: World, mechanism: str, payload: Payload) -> tuple[dict, dict]:
    with host_settings(payload):
        world.reset()
        before = world.snapshot()
        answer = world.driver.run(world.request(mechanism, world.line(payload), shell=payload.shell, settle_s=payload.settle_s))
        return answer, world.evidence(before, answer)


@pytest.mark.parametrize("payload", PAYLOADS, ids=lambda p: p.id)
def test_an_unconfined_payload_reaches_its_target(world: World, payload: Payload) -> None:
    reason = missing(payload)
    if reason:
        pytest.skip(reason)
    answer, reached = _run(world, "off", payload)
    assert payload.shows in reached, f"{payload.id} ({payload.tries}) did nothing unconfined: {answer['output']!r}"


@pytest.mark.parametrize("mechanism", MECHANISMS)
@pytest.mark.parametrize("payload", PAYLOADS, ids=lambda p: p.id)
def test_a_sandboxed_payload_reaches_nothing(world: World, mechanism: str, payload: Payload) -> None:
    usable(mechanism)
    answer, reached = _run(world, mechanism, payload)
    assert answer["refused"] is None, answer["refused"]
    assert reached == {}, f"{payload.id} ({payload.tries}) escaped the {mechanism} sandbox: {reached}; output {answer['output']!r}"


def test_the_table_covers_every_kind_of_escape() -> None:
    kinds = {payload.shows for payload in PAYLOADS}
    assert kinds == {"canary", "write", "tcp", "tcp6", "udp", "unix", "unix_dgram", "signal"}
    assert len(PAYLOADS) >= 30
