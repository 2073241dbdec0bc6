"""The gateway records how each channel is doing: a crashing channel is restarted with
backoff while the others keep answering; one that cannot run here is stopped with its reason."""

from __future__ import annotations

import asyncio

from clawbot.gateway.runner import Gateway
from clawbot.testing import FakeChannel, plugin_from_hooks
from clawbot.types import Channel


async def _echo(message, session_key):
    return f"echo {message.text}"


class CrashingChannel(Channel):
    """A channel plugin whose start fails every time, as a broken network channel's would."""

    name = "crashy"

    def __init__(self) -> None:
        self.starts: list[float] = []

    async def start(self, sink) -> None:
        self.starts.append(asyncio.get_running_loop().time())
        raise ConnectionError("bot API unreachable\nsecond line of detail")

    async def send(self, message) -> None:
        raise AssertionError("nothing is sent on a channel that never started")


class NoTerminalHere(FakeChannel):
    def available(self) -> str | None:
        return "no terminal: standard input is /dev/null"


async def _until(predicate, timeout: float = 30.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not predicate():
        assert loop.time() < deadline, "timed out"
        await asyncio.sleep(0.005)


async def test_a_crashing_channel_is_restarted_with_backoff_while_another_keeps_answering(make_kernel) -> None:
    crashy, steady = CrashingChannel(), FakeChannel("steady")
    plugin = plugin_from_hooks(clawbot_channels=lambda ctx: [crashy, steady])
    kernel = await make_kernel(plugins={"channels": plugin})
    gateway = Gateway(kernel, _echo, "main", restart_delays=(0.05, 0.1, 0.2))
    gateway.up_after = 0.01
    task = asyncio.create_task(gateway.run())
    await steady.wait_started()
    await _until(lambda: len(crashy.starts) >= 4)
    await steady.inject("still here?")
    await _until(lambda: {h.name: h.state for h in gateway.health()}.get("steady") == "running")
    health = {h.name: h for h in gateway.health()}
    gateway.stop()
    await task
    assert steady.texts() == ["echo still here?"]
    gaps = [b - a for a, b in zip(crashy.starts, crashy.starts[1:], strict=False)]
    assert gaps[0] >= 0.04 and gaps[1] >= 0.09 and gaps[2] >= 0.19  # backing off
    crash = health["crashy"]
    assert crash.state in ("restarting", "starting") and crash.restarts >= 3
    assert crash.last_error == "ConnectionError: bot API unreachable second line of detail"
    assert health["steady"].restarts == 0 and health["steady"].last_error is None
    after = {h.name: h for h in gateway.health()}
    assert after["crashy"].state == "failed" and after["steady"].state == "stopped"
    assert all(h.since > 0 for h in after.values())


async def test_a_channel_that_cannot_run_here_is_stopped_with_its_reason_and_the_others_serve(make_kernel) -> None:
    absent, steady = NoTerminalHere("console"), FakeChannel("steady")
    kernel = await make_kernel()
    gateway = Gateway(kernel, _echo, "main")
    task = asyncio.create_task(gateway.run([absent, steady]))
    await steady.wait_started()
    await steady.inject("hi")
    health = {h.name: h for h in gateway.health()}
    assert not task.done()  # the unavailable channel did not end the gateway
    gateway.stop()
    await task
    assert absent.starts == 0
    assert health["console"].state == "stopped"
    assert health["console"].last_error == "no terminal: standard input is /dev/null"
    assert steady.texts() == ["echo hi"]


async def test_a_channel_whose_user_quits_stops_the_whole_gateway(make_kernel) -> None:
    """Ctrl-D at the terminal: the person asked clawbot to quit, so the other channels stop too."""
    quitter, steady = FakeChannel("console"), FakeChannel("steady")
    kernel = await make_kernel()
    gateway = Gateway(kernel, _echo, "main")
    task = asyncio.create_task(gateway.run([quitter, steady]))
    await quitter.wait_started()
    await steady.wait_started()
    quitter._sink.quit()
    await asyncio.wait_for(task, 30)
